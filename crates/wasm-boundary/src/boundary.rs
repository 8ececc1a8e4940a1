//! A verifier object's state around its profile: the header checks waiting
//! for their body, and the whole decision on one request.

use toolctx_core::digits::push_u64;
use toolctx_core::{Accepted, Checked, HeadersVerdict, Verdict};

use crate::verdicts::{refusal, verdict};
use crate::{Error, Tickets};

/// What a wasm verifier object asks of its profile's core: the header
/// check, and every check after it.
pub trait Profile {
    type Context: Accepted;
    /// Steps 0 and 1.
    fn check_headers(&self, method: &str, headers: &[(&[u8], &[u8])]) -> HeadersVerdict;
    /// Every check after steps 0 and 1; `now` is Unix seconds (a profile
    /// without a clock ignores it).
    fn check_body(
        &mut self,
        proof: Checked,
        headers: &[(&[u8], &[u8])],
        body: &[u8],
        now: f64,
    ) -> Verdict<Self::Context>;
    /// The verdict string of `v`; a profile that completes an accepted
    /// verdict outside the core (a shared replay store) answers otherwise.
    fn answer(&mut self, v: Verdict<Self::Context>, include_reason: bool) -> String {
        verdict(v, include_reason)
    }
}

/// A wasm verifier object's state around its profile: how refusals are
/// rendered, and the header checks waiting for their body. Its methods are
/// the object's `checkHeaders`, `verify` and `verifyBody`.
pub struct Boundary<P> {
    pub profile: P,
    pub include_reason: bool,
    held: Tickets<HeldRequest>,
}

impl<P: Profile> Boundary<P> {
    pub fn new(profile: P, include_reason: bool) -> Boundary<P> {
        Boundary {
            profile,
            include_reason,
            held: Tickets::new(HELD_REQUESTS),
        }
    }

    /// `checkHeaders`: `p`, `r` + refusal, or `b` + a ticket for
    /// [`Boundary::verify_body`], which keeps the core's proof with the
    /// method and headers as checked.
    pub fn check_headers(&mut self, heads: &[u8], lens: &[u32]) -> Result<String, Error> {
        let (method, headers) = split(heads, lens)?;
        Ok(match self.read_body(method, &headers) {
            Ok(proof) => {
                let request = HeldRequest {
                    proof,
                    heads: heads.to_vec(),
                    lens: lens.to_vec(),
                };
                let mut out = String::from("b");
                push_u64(self.held.hold(request).into(), &mut out);
                out
            }
            Err(answer) => answer,
        })
    }

    /// `verify`: the whole decision on one request.
    pub fn verify(
        &mut self,
        heads: &[u8],
        lens: &[u32],
        body: &[u8],
        now: f64,
    ) -> Result<String, Error> {
        let (method, headers) = split(heads, lens)?;
        Ok(match self.read_body(method, &headers) {
            Ok(proof) => {
                let v = self.profile.check_body(proof, &headers, body, now);
                self.profile.answer(v, self.include_reason)
            }
            Err(answer) => answer,
        })
    }

    /// `verifyBody`: `verify`'s verdict for the request that
    /// `checkHeaders` gave `ticket` for, on the method and headers it
    /// checked then, without steps 0 and 1; `u` when the ticket holds
    /// nothing.
    pub fn verify_body(&mut self, ticket: f64, body: &[u8], now: f64) -> Result<String, Error> {
        let Some(held) = self.held.take(ticket) else {
            return Ok(UNCHECKED.into());
        };
        let (_, headers) = split(&held.heads, &held.lens)?;
        let v = self.profile.check_body(held.proof, &headers, body, now);
        Ok(self.profile.answer(v, self.include_reason))
    }

    /// Steps 0 and 1 settled: `Ok` with the core's proof when the body is
    /// to be read, `Err` with the answer (`p`, or `r` + refusal) when not.
    fn read_body(&self, method: &str, headers: &[(&[u8], &[u8])]) -> Result<Checked, String> {
        match self.profile.check_headers(method, headers) {
            HeadersVerdict::Pass => Err("p".into()),
            HeadersVerdict::ReadBody(proof) => Ok(proof),
            HeadersVerdict::Reject(r) => Err(refusal(&r, self.include_reason)),
        }
    }
}

/// The body check's answer for a ticket that holds nothing (never issued,
/// already used, or pushed out by newer ones): run the whole check instead.
const UNCHECKED: &str = "u";

/// How many header checks wait for their body at once per verifier; an
/// older one is forgotten and its body check runs the whole check.
const HELD_REQUESTS: usize = 64;

/// A request whose headers passed steps 0 and 1: the core's proof, and the
/// method and headers (`heads`, `lens`, as [`split`] reads them) as they
/// were checked.
pub struct HeldRequest {
    proof: Checked,
    heads: Vec<u8>,
    lens: Vec<u32>,
}

/// The error of lengths that do not fit their buffer.
fn bad() -> Error {
    Error::internal("headers buffer does not match its lengths")
}

/// Cuts `heads` by `lens`: the method, then name/value pairs.
#[allow(clippy::type_complexity)]
pub fn split<'a>(
    heads: &'a [u8],
    lens: &[u32],
) -> Result<(&'a str, Vec<(&'a [u8], &'a [u8])>), Error> {
    let mut rest = heads;
    let mut take = |len: u32| -> Result<&'a [u8], Error> {
        let len = usize::try_from(len).map_err(|_| bad())?;
        if len > rest.len() {
            return Err(bad());
        }
        let (head, tail) = rest.split_at(len);
        rest = tail;
        Ok(head)
    };
    let (first, pairs) = lens.split_first().ok_or_else(bad)?;
    // The method comes from a host string (JavaScript, Go, Java): UTF-8.
    let method = core::str::from_utf8(take(*first)?).map_err(|_| bad())?;
    let mut headers = Vec::with_capacity(pairs.len() / 2);
    for pair in pairs.chunks(2) {
        let [name, value] = pair else {
            return Err(bad());
        };
        headers.push((take(*name)?, take(*value)?));
    }
    Ok((method, headers))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_cuts_by_lengths() {
        let buf = b"POSTx-aby-c";
        let Ok((m, h)) = split(buf, &[4, 3, 1, 1, 2]) else {
            unreachable!()
        };
        assert_eq!(m, "POST");
        assert_eq!(h, vec![(&b"x-a"[..], &b"b"[..]), (&b"y"[..], &b"-c"[..])]);
        assert!(
            split(buf, &[4, 3, 1, 1]).is_err(),
            "a name without its value"
        );
        assert!(split(buf, &[4, 3, 1, 1, 3]).is_err(), "beyond the buffer");
    }
}
