//! Durable claims (docs/CONTRACT.md §5.4): Redis replicates asynchronously,
//! so a write a primary acknowledged is lost if the primary dies before a
//! replica has it, and after the failover the same token is accepted again
//! or an idempotent call runs twice. With `wait_replicas` in the store
//! address, each write that counts (a replay claim, an idempotency claim, a
//! stored result) is followed on the same connection by
//! `WAIT <replicas> <timeout ms>`, and counts only when at least that many
//! replicas acknowledged it. Anything less fails closed, as a store
//! failure: the token is refused, the tool does not run (its claim is
//! released), a result already produced stands and the failure is
//! reported.

use alloc::format;
use alloc::string::String;

use super::address::Wait;
use crate::redis::Reply;

/// `WAIT <replicas> <timeout ms>`, sent right after the write it covers,
/// on the same connection (a cluster client: to the node that took the
/// write, the write's key's node).
pub fn wait_args(wait: Wait) -> [String; 3] {
    [
        "WAIT".into(),
        format!("{}", wait.replicas),
        format!("{}", wait.timeout_ms.max(1)),
    ]
}

/// What `WAIT`'s reply means.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Durability {
    /// At least the replicas asked for have the write: it counts.
    Durable,
    /// Fewer replicas acknowledged it before the timeout: fail closed.
    Short,
    /// Not a count (an error, a timeout, another reply): the store failed.
    Failed,
}

impl Durability {
    pub const fn as_str(self) -> &'static str {
        match self {
            Durability::Durable => "durable",
            Durability::Short => "short",
            Durability::Failed => "failed",
        }
    }

    /// Whether the write counts (only [`Durability::Durable`]).
    pub const fn counts(self) -> bool {
        matches!(self, Durability::Durable)
    }
}

/// The meaning of `WAIT`'s `reply` for `wait`.
pub fn meaning(wait: Wait, reply: Reply<'_>) -> Durability {
    match reply {
        Reply::Integer(n) if n >= i64::from(wait.replicas) => Durability::Durable,
        Reply::Integer(n) if n >= 0 => Durability::Short,
        _ => Durability::Failed,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const W: Wait = Wait {
        replicas: 2,
        timeout_ms: 250,
    };

    #[test]
    fn wait_counts_only_enough_replicas() {
        assert_eq!(wait_args(W), ["WAIT", "2", "250"]);
        assert_eq!(meaning(W, Reply::Integer(2)), Durability::Durable);
        assert_eq!(meaning(W, Reply::Integer(3)), Durability::Durable);
        assert_eq!(meaning(W, Reply::Integer(1)), Durability::Short);
        assert_eq!(meaning(W, Reply::Integer(0)), Durability::Short);
        for failed in [
            Reply::Integer(-1),
            Reply::Nil,
            Reply::Status("OK"),
            Reply::Bulk(b"2"),
            Reply::Error("ERR WAIT cannot be used with replica instances"),
            Reply::Other,
        ] {
            assert_eq!(meaning(W, failed), Durability::Failed, "{failed:?}");
            assert!(!meaning(W, failed).counts());
        }
    }
}
