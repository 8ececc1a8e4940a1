//! The gateways' counters: their names (the filter's and the module's; the
//! ext_authz service writes the same names in Prometheus form, `_` for
//! `.`), calls passed untouched, accepted, answered 500, and one per
//! refusal reason; and [`Counters`], the one set each gateway keeps, with
//! the per-reason index every gateway counts a refusal by.

use std::convert::Infallible;

use toolctx_core::Reason;

pub const PASSED: &str = "toolctx.passed";
pub const ACCEPTED: &str = "toolctx.accepted";
pub const ERRORS: &str = "toolctx.errors";

/// `toolctx.refused.<reason>`.
pub fn refused(reason: Reason) -> String {
    format!("toolctx.refused.{}", reason.as_str())
}

/// A counter name as Prometheus writes it (`toolctx_refused_token_expired`
/// for `toolctx.refused.token_expired`), as Envoy's `/stats/prometheus`
/// shows the filter's counters.
pub fn prometheus(name: &str) -> String {
    name.replace('.', "_")
}

/// One counter `T` per name above: an id a host handed out (the filter's
/// `u32`, the module's `usize`) or the counter itself (the service's).
/// The default has no refusal counter (a host's ids before it defined them).
#[derive(Debug, Default)]
pub struct Counters<T> {
    pub passed: T,
    pub accepted: T,
    pub errors: T,
    /// One per [`Reason::ALL`], same order.
    refused: Vec<T>,
}

impl<T> Counters<T> {
    /// Defines every counter with `define`, which is given its name.
    pub fn define<E>(mut define: impl FnMut(&str) -> Result<T, E>) -> Result<Counters<T>, E> {
        Ok(Counters {
            passed: define(PASSED)?,
            accepted: define(ACCEPTED)?,
            errors: define(ERRORS)?,
            refused: Reason::ALL
                .iter()
                .map(|r| define(&refused(*r)))
                .collect::<Result<_, _>>()?,
        })
    }

    /// Every counter made by `make`, which is given its name.
    pub fn new(mut make: impl FnMut(&str) -> T) -> Counters<T> {
        match Counters::define(|name| Ok::<T, Infallible>(make(name))) {
            Ok(counters) => counters,
            Err(never) => match never {},
        }
    }

    /// The counter of refusals for `reason`.
    pub fn refused(&self, reason: Reason) -> Option<&T> {
        let i = Reason::ALL.iter().position(|r| *r == reason)?;
        self.refused.get(i)
    }

    /// Every reason with its counter, in [`Reason::ALL`]'s order.
    pub fn each_refused(&self) -> impl Iterator<Item = (Reason, &T)> {
        Reason::ALL.iter().copied().zip(&self.refused)
    }
}
