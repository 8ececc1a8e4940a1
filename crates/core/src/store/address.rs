//! The store address: one grammar for where the shared state lives, read
//! here for every front end that opens its own connection (docs/CONTRACT.md
//! §5.4). The address may hold a password: no message of this module quotes
//! it, and [`StoreAddress`]'s `Debug` and [`StoreAddress::redacted`] leave
//! the password out.
//!
//! ```text
//! address  = scheme "://" [userinfo "@"] node *("," node) ["/" db]
//!            ["?" param *("&" param)] ["#" primary]
//! scheme   = "redis" | "rediss"                    one node (rediss: TLS)
//!          | "redis-cluster" | "rediss-cluster"    a Redis Cluster, by seeds
//!          | "redis-sentinel" | "rediss-sentinel"  a Sentinel set; #primary
//! userinfo = [user] ":" password                   percent-encoded
//! node     = host [":" port]                       [IPv6] in brackets
//! param    = "ca=" path | "cert=" path | "key=" path          (TLS only)
//!          | "wait_replicas=" n | "wait_timeout_ms=" ms       (durable claims)
//! ```

use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;
use core::fmt;

use crate::settings;

/// The port a node has when its address gives none.
pub const REDIS_PORT: u16 = 6379;
/// The port a Sentinel has when its address gives none.
pub const SENTINEL_PORT: u16 = 26379;
/// The most replicas a durable claim may wait for.
pub const MAX_WAIT_REPLICAS: u32 = 64;
/// How long `WAIT` may block when the address gives no `wait_timeout_ms`:
/// half the store timeout's default, so that the reply still comes within
/// one store command's time.
pub const DEFAULT_WAIT_TIMEOUT_MS: u64 = settings::STORE_TIMEOUT_MS / 2;
/// The longest `wait_timeout_ms` (the store timeout's own bound).
pub const MAX_WAIT_TIMEOUT_MS: u64 = settings::MAX_STORE_TIMEOUT_MS;
/// The highest database number (Redis's own bound is its `databases`
/// setting; a number past this is a typo).
pub const MAX_DB: u32 = 1_000_000;

/// How the nodes of an address are reached.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Topology {
    /// One node (`redis://`, `rediss://`).
    Single,
    /// A Redis Cluster found from its seed nodes (`redis-cluster://`).
    Cluster,
    /// A primary found by name through a set of Sentinels
    /// (`redis-sentinel://`), its name after `#`.
    Sentinel { primary: String },
}

impl Topology {
    pub const fn as_str(&self) -> &'static str {
        match self {
            Topology::Single => "single",
            Topology::Cluster => "cluster",
            Topology::Sentinel { .. } => "sentinel",
        }
    }
}

/// One `host:port` of an address.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Node {
    /// A name, an IPv4 address, or an IPv6 address without its brackets.
    pub host: String,
    pub port: u16,
}

/// TLS settings of a `rediss` address: the certificate is always verified
/// (against `ca`, or the host's trust store without one).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Tls {
    /// A PEM file of the certificate authorities to trust.
    pub ca: Option<String>,
    /// A PEM client certificate and its key, given together.
    pub cert: Option<String>,
    pub key: Option<String>,
}

/// Durable claims: a claim, a lease or a stored result counts only once
/// `replicas` replicas acknowledge it (`WAIT replicas timeout_ms`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Wait {
    pub replicas: u32,
    pub timeout_ms: u64,
}

/// A parsed store address.
#[derive(Clone, PartialEq, Eq)]
pub struct StoreAddress {
    pub topology: Topology,
    /// `Some` for the `rediss` schemes.
    pub tls: Option<Tls>,
    /// The node, the cluster's seeds, or the Sentinels, in the order given.
    pub nodes: Vec<Node>,
    /// The ACL user (`None`: the default user).
    pub user: Option<String>,
    password: Option<String>,
    pub db: u32,
    pub wait: Option<Wait>,
}

impl fmt::Debug for StoreAddress {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StoreAddress")
            .field("topology", &self.topology)
            .field("tls", &self.tls)
            .field("nodes", &self.nodes)
            .field("user", &self.user)
            .field("password", &self.password.as_ref().map(|_| "<redacted>"))
            .field("db", &self.db)
            .field("wait", &self.wait)
            .finish()
    }
}

/// What a front end's Redis client can do; an address that needs more is
/// refused at start ([`StoreAddress::check`]), never downgraded.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Supports {
    pub tls: bool,
    pub cluster: bool,
    pub sentinel: bool,
    pub wait: bool,
}

impl Supports {
    /// Everything (a front end whose client does it all).
    pub const ALL: Supports = Supports {
        tls: true,
        cluster: true,
        sentinel: true,
        wait: true,
    };
}

/// Why an address is refused: `store_address_invalid` (the text), or
/// `store_address_unsupported` (this front end cannot reach it), or
/// `config_placeholder`. The message never quotes the address.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AddressError {
    Invalid(String),
    Unsupported(&'static str),
    Placeholder,
}

impl AddressError {
    pub const CODES: [&'static str; 3] = [
        "store_address_invalid",
        "store_address_unsupported",
        "config_placeholder",
    ];

    pub const fn code(&self) -> &'static str {
        match self {
            AddressError::Invalid(_) => "store_address_invalid",
            AddressError::Unsupported(_) => "store_address_unsupported",
            AddressError::Placeholder => "config_placeholder",
        }
    }
}

impl fmt::Display for AddressError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AddressError::Invalid(why) => write!(f, "the store address is invalid: {why}"),
            AddressError::Unsupported(what) => write!(
                f,
                "the store address needs {what}, which this front end's Redis client does not do"
            ),
            AddressError::Placeholder => f.write_str(
                "the store address holds an unresolved placeholder `${...}`: set the variable it names",
            ),
        }
    }
}

impl core::error::Error for AddressError {}

fn invalid<T>(why: &str) -> Result<T, AddressError> {
    Err(AddressError::Invalid(why.to_string()))
}

impl StoreAddress {
    /// Reads `text` by the grammar above.
    pub fn parse(text: &str) -> Result<StoreAddress, AddressError> {
        if settings::has_placeholder(text.as_bytes()) {
            return Err(AddressError::Placeholder);
        }
        if text.bytes().any(|b| b <= b' ' || b == 0x7f) {
            return invalid("it holds a space or a control character");
        }
        let Some((scheme, rest)) = text.split_once("://") else {
            return invalid("it must start with redis://, rediss://, redis-cluster://, rediss-cluster://, redis-sentinel:// or rediss-sentinel://");
        };
        let (tls, kind) = match scheme {
            "redis" => (false, 0),
            "rediss" => (true, 0),
            "redis-cluster" => (false, 1),
            "rediss-cluster" => (true, 1),
            "redis-sentinel" => (false, 2),
            "rediss-sentinel" => (true, 2),
            _ => return invalid("it must start with redis://, rediss://, redis-cluster://, rediss-cluster://, redis-sentinel:// or rediss-sentinel://"),
        };
        let (rest, primary) = match rest.split_once('#') {
            Some((r, p)) => (r, Some(decode(p, "the primary's name")?)),
            None => (rest, None),
        };
        let (rest, query) = match rest.split_once('?') {
            Some((r, q)) => (r, Some(q)),
            None => (rest, None),
        };
        // The last `@` ends the user info: a password may hold an escaped
        // one only (`%40`), but a raw one is taken as written.
        let (auth, place) = match rest.rsplit_once('@') {
            Some((a, p)) => (Some(a), p),
            None => (None, rest),
        };
        let (hosts, db) = match place.split_once('/') {
            Some((h, d)) => (h, Some(d)),
            None => (place, None),
        };
        let default_port = if kind == 2 { SENTINEL_PORT } else { REDIS_PORT };
        let mut nodes = Vec::new();
        for one in hosts.split(',') {
            nodes.push(node(one, default_port)?);
        }
        if kind == 0 && nodes.len() > 1 {
            return invalid("several nodes need redis-cluster:// or redis-sentinel://");
        }
        let db = match db {
            None | Some("") => 0,
            Some(d) => number(d)
                .filter(|n| *n <= u64::from(MAX_DB))
                .and_then(|n| u32::try_from(n).ok())
                .map_or_else(
                    || invalid(&format!("the database must be a number from 0 to {MAX_DB}")),
                    Ok,
                )?,
        };
        if kind == 1 && db != 0 {
            return invalid("a Redis Cluster has database 0 only");
        }
        let (user, password) = match auth {
            None => (None, None),
            Some(a) => {
                let Some((u, p)) = a.split_once(':') else {
                    return invalid("a user needs a password (user:password@)");
                };
                let u = decode(u, "the user")?;
                let p = decode(p, "the password")?;
                if p.is_empty() {
                    return invalid("the password is empty");
                }
                (Some(u).filter(|u| !u.is_empty()), Some(p))
            }
        };
        let topology = match (kind, primary) {
            (2, Some(p)) if !p.is_empty() => Topology::Sentinel { primary: p },
            (2, _) => {
                return invalid(
                    "a Sentinel address names its primary after # (redis-sentinel://host#name)",
                )
            }
            (_, Some(_)) => return invalid("only a Sentinel address has a #primary"),
            (1, None) => Topology::Cluster,
            _ => Topology::Single,
        };
        let (tls_params, wait) = params(query.unwrap_or(""), query.is_some())?;
        let tls = match (tls, tls_params) {
            (true, t) => Some(t),
            (false, t) if t == Tls::default() => None,
            (false, _) => return invalid("ca, cert and key need a TLS address (rediss://)"),
        };
        Ok(StoreAddress {
            topology,
            tls,
            nodes,
            user,
            password,
            db,
            wait,
        })
    }

    /// The password (`None`: no `AUTH`, or the default user's).
    pub fn password(&self) -> Option<&str> {
        self.password.as_deref()
    }

    /// Refuses an address that needs what `supports` lacks, naming it.
    pub fn check(&self, supports: Supports) -> Result<(), AddressError> {
        let needs = [
            (self.tls.is_some() && !supports.tls, "TLS (rediss)"),
            (
                self.topology == Topology::Cluster && !supports.cluster,
                "Redis Cluster",
            ),
            (
                matches!(self.topology, Topology::Sentinel { .. }) && !supports.sentinel,
                "Sentinel",
            ),
            (
                self.wait.is_some() && !supports.wait,
                "durable claims (wait_replicas)",
            ),
        ];
        match needs.iter().find(|(refused, _)| *refused) {
            Some((_, what)) => Err(AddressError::Unsupported(what)),
            None => Ok(()),
        }
    }

    /// The address as a log may show it: the password replaced by `***`.
    pub fn redacted(&self) -> String {
        let scheme = match (&self.topology, self.tls.is_some()) {
            (Topology::Single, false) => "redis",
            (Topology::Single, true) => "rediss",
            (Topology::Cluster, false) => "redis-cluster",
            (Topology::Cluster, true) => "rediss-cluster",
            (Topology::Sentinel { .. }, false) => "redis-sentinel",
            (Topology::Sentinel { .. }, true) => "rediss-sentinel",
        };
        let mut out = format!("{scheme}://");
        if self.password.is_some() {
            out.push_str(self.user.as_deref().unwrap_or(""));
            out.push_str(":***@");
        }
        let nodes: Vec<String> = self
            .nodes
            .iter()
            .map(|n| match n.host.contains(':') {
                true => format!("[{}]:{}", n.host, n.port),
                false => format!("{}:{}", n.host, n.port),
            })
            .collect();
        out.push_str(&nodes.join(","));
        out.push_str(&format!("/{}", self.db));
        if let Topology::Sentinel { primary } = &self.topology {
            out.push('#');
            out.push_str(primary);
        }
        out
    }
}

fn number(digits: &str) -> Option<u64> {
    if digits.is_empty() || digits.len() > 12 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

fn node(text: &str, default_port: u16) -> Result<Node, AddressError> {
    let (host, port) = if let Some(v6) = text.strip_prefix('[') {
        let Some((host, after)) = v6.split_once(']') else {
            return invalid("an unclosed [ in a host");
        };
        if host.is_empty()
            || !host
                .bytes()
                .all(|b| b.is_ascii_hexdigit() || b == b':' || b == b'.')
            || !host.contains(':')
        {
            return invalid("a host in brackets must be an IPv6 address");
        }
        match after {
            "" => (host, None),
            p => match p.strip_prefix(':') {
                Some(p) => (host, Some(p)),
                None => return invalid("junk after a host"),
            },
        }
    } else {
        let (host, port) = match text.split_once(':') {
            Some((h, p)) => (h, Some(p)),
            None => (text, None),
        };
        if host.is_empty() {
            return invalid("a node names no host");
        }
        if !host
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'.' || b == b'_')
        {
            return invalid("a host holds a character a host name cannot");
        }
        (host, port)
    };
    let port = match port {
        None => default_port,
        Some(p) => number(p)
            .filter(|n| (1..=65535).contains(n))
            .and_then(|n| u16::try_from(n).ok())
            .map_or_else(|| invalid("a port must be 1 to 65535"), Ok)?,
    };
    Ok(Node {
        host: host.to_ascii_lowercase(),
        port,
    })
}

/// The query: TLS files and durable claims, each once; anything else is
/// refused (a misspelt `wait_replicas` must not leave claims undurable).
fn params(query: &str, given: bool) -> Result<(Tls, Option<Wait>), AddressError> {
    let mut tls = Tls::default();
    let (mut replicas, mut timeout) = (None, None);
    if given && query.is_empty() {
        return invalid("an empty query after ?");
    }
    for pair in query.split('&').filter(|_| given) {
        let Some((name, value)) = pair.split_once('=') else {
            return invalid("a query parameter without =");
        };
        let value = decode(value, "a query parameter")?;
        if value.is_empty() {
            return invalid(&format!("`{}` is empty", shown(name)));
        }
        let slot = match name {
            "ca" => &mut tls.ca,
            "cert" => &mut tls.cert,
            "key" => &mut tls.key,
            "wait_replicas" => &mut replicas,
            "wait_timeout_ms" => &mut timeout,
            _ => return invalid(&format!("unknown query parameter `{}`", shown(name))),
        };
        if slot.replace(value).is_some() {
            return invalid(&format!("`{name}` is given twice"));
        }
    }
    if tls.cert.is_some() != tls.key.is_some() {
        return invalid("cert and key go together");
    }
    let wait = match (replicas, timeout) {
        (None, None) => None,
        (None, Some(_)) => return invalid("wait_timeout_ms needs wait_replicas"),
        (Some(r), t) => {
            let replicas = number(&r)
                .filter(|n| (1..=u64::from(MAX_WAIT_REPLICAS)).contains(n))
                .and_then(|n| u32::try_from(n).ok())
                .map_or_else(
                    || invalid(&format!("wait_replicas must be 1 to {MAX_WAIT_REPLICAS}")),
                    Ok,
                )?;
            let timeout_ms = match t {
                None => DEFAULT_WAIT_TIMEOUT_MS,
                Some(t) => number(&t)
                    .filter(|n| (1..=MAX_WAIT_TIMEOUT_MS).contains(n))
                    .map_or_else(
                        || {
                            invalid(&format!(
                                "wait_timeout_ms must be 1 to {MAX_WAIT_TIMEOUT_MS}"
                            ))
                        },
                        Ok,
                    )?,
            };
            Some(Wait {
                replicas,
                timeout_ms,
            })
        }
    };
    Ok((tls, wait))
}

/// A parameter's name as a message may show it: a name is never a secret,
/// but a pasted password could stand where a name should; past 32
/// characters or with anything but letters, digits and `_`, it is not shown.
fn shown(name: &str) -> &str {
    if name.len() <= 32 && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') {
        name
    } else {
        "(not shown)"
    }
}

/// Percent-decodes `text` into UTF-8; `what` names it in a refusal.
fn decode(text: &str, what: &str) -> Result<String, AddressError> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while let Some(&b) = bytes.get(i) {
        if b == b'%' {
            let hex = bytes
                .get(i + 1..i + 3)
                .and_then(|h| core::str::from_utf8(h).ok())
                .filter(|h| h.bytes().all(|c| c.is_ascii_hexdigit()))
                .and_then(|h| u8::from_str_radix(h, 16).ok());
            match hex {
                Some(x) => out.push(x),
                None => return invalid(&format!("a bad %-escape in {what}")),
            }
            i += 3;
        } else {
            out.push(b);
            i += 1;
        }
    }
    String::from_utf8(out).map_or_else(|_| invalid(&format!("{what} is not UTF-8")), Ok)
}
