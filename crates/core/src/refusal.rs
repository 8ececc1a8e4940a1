//! A refused request (CONTRACT §3): the reason and the JSON-RPC id to
//! answer with, rendered as the error response.

use alloc::string::String;

use crate::digits::push_i64;
use crate::json::write_str;
use crate::reason::Reason;

/// A refused request: the reason and the JSON-RPC id to answer with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    reason: Reason,
    /// The request id as JSON text; `None` answers with `null`.
    id: Option<String>,
    /// The policy rule that denied the call (`policy_denied` only).
    #[cfg(feature = "policy")]
    rule: Option<String>,
}

impl Refusal {
    /// The refusal for `reason` answering the request id `id` (JSON text);
    /// a reason that answers `null` ([`Reason::answers_null_id`]) drops it.
    pub fn new(reason: Reason, id: Option<String>) -> Refusal {
        let id = if reason.answers_null_id() { None } else { id };
        Refusal {
            reason,
            id,
            #[cfg(feature = "policy")]
            rule: None,
        }
    }

    /// The refusal naming the policy rule that denied the call: written
    /// as `error.data.rule` beside the reason.
    #[cfg(feature = "policy")]
    pub fn with_rule(mut self, rule: String) -> Refusal {
        self.rule = Some(rule);
        self
    }

    /// The policy rule that denied the call (`policy_denied`), for the
    /// refusal's log line, span and metric: a rule's name as configured
    /// (CONTRACT §8: letters, digits and `_-./:` only), or `default`.
    #[cfg(feature = "policy")]
    pub fn rule(&self) -> Option<&str> {
        self.rule.as_deref()
    }
    pub fn reason(&self) -> Reason {
        self.reason
    }
    pub fn status(&self) -> u16 {
        self.reason.status()
    }
    pub fn code(&self) -> i32 {
        self.reason.code()
    }
    pub fn message(&self) -> &'static str {
        self.reason.message()
    }
    /// The id as JSON text: a string literal, a number, or `null`.
    pub fn id_json(&self) -> &str {
        self.id.as_deref().unwrap_or("null")
    }

    /// The JSON-RPC error response. `include_reason: false` leaves out
    /// `error.data`; status, code and message never change.
    pub fn body(&self, include_reason: bool) -> String {
        let mut out = String::with_capacity(160);
        out.push_str("{\"jsonrpc\":\"2.0\",\"id\":");
        out.push_str(self.id_json());
        out.push_str(",\"error\":{\"code\":");
        push_i64(self.code().into(), &mut out);
        out.push_str(",\"message\":");
        write_str(self.message(), &mut out);
        if include_reason {
            out.push_str(",\"data\":{\"reason\":\"");
            out.push_str(self.reason.as_str());
            out.push('"');
            #[cfg(feature = "policy")]
            if let Some(rule) = &self.rule {
                out.push_str(",\"rule\":");
                write_str(rule, &mut out);
            }
            out.push('}');
        }
        out.push_str("}}");
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Steps 1 to 4 answer `null` whatever id they are given; later steps
    /// answer the request's own.
    #[test]
    fn null_id_reasons_drop_the_id() {
        for r in Reason::ALL {
            let refusal = Refusal::new(r, Some(String::from("7")));
            let want = if r.answers_null_id() { "null" } else { "7" };
            assert_eq!(refusal.id_json(), want, "{r}");
        }
        assert!(Reason::BatchWithToolsCall.answers_null_id());
        assert!(!Reason::InvalidParams.answers_null_id());
        assert!(!Reason::InternalError.answers_null_id());
    }
}
