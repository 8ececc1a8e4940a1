//! Which MCP protocol revision a result is written for (CONTRACT §5,
//! "replays across protocol revisions"): revision 2026-07-28 added a
//! `resultType` member to every result (`"complete"` for a finished call,
//! `"input_required"` for a round of a multi-round-trip call), which its
//! clients require; earlier revisions have none.
//!
//! A front end hands the core the revision of the request it answers, as
//! the request or its SDK names it (`MCP-Protocol-Version`, the per-request
//! metadata, the session's negotiated version), or `""` when it has none.

/// The member revision 2026-07-28 added to every result.
pub const RESULT_TYPE: &str = "resultType";
/// Its value on a finished call's result.
pub const COMPLETE: &str = "complete";
/// The first revision whose results carry [`RESULT_TYPE`].
pub const FIRST_WITH_RESULT_TYPE: &str = "2026-07-28";

/// Whether a result answering a request of `revision` carries
/// `resultType`.
///
/// A revision of the form `YYYY-MM-DD` (ASCII digits) is compared as the
/// date it names: [`FIRST_WITH_RESULT_TYPE`] and later carry it, earlier
/// revisions do not. Anything else, `""` (no revision known) included,
/// carries it: that is the one form every revision accepts, since the
/// earlier revisions' `Result` admits members it does not name while a
/// 2026-07-28 client refuses a result without it.
pub fn result_type_required(revision: &str) -> bool {
    !is_date(revision) || revision >= FIRST_WITH_RESULT_TYPE
}

/// `YYYY-MM-DD` in ASCII digits, where comparing the text compares dates.
fn is_date(text: &str) -> bool {
    let b = text.as_bytes();
    b.len() == 10
        && b.iter().enumerate().all(|(i, c)| match i {
            4 | 7 => *c == b'-',
            _ => c.is_ascii_digit(),
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn revisions_from_2026_07_28_carry_result_type() {
        for r in ["2026-07-28", "2026-07-29", "2027-01-01", "9999-99-99"] {
            assert!(result_type_required(r), "{r}");
        }
        for r in [
            "2024-11-05",
            "2025-03-26",
            "2025-06-18",
            "2025-11-25",
            "2026-07-27",
        ] {
            assert!(!result_type_required(r), "{r}");
        }
    }

    #[test]
    fn an_unknown_revision_gets_the_form_every_revision_accepts() {
        for r in [
            "",
            "draft",
            "2025-11-25 ",
            "2025-1-25",
            "2025/11/25",
            "２０２５-11-25",
            "DRAFT-2026-v1",
        ] {
            assert!(result_type_required(r), "{r:?}");
        }
    }
}
