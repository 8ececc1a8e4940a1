#![forbid(unsafe_code)]
//! The Redis URL the module takes from the environment.

/// `redis://[[user]:password@]host[:port][/db]`, parsed (never shown: it
/// may hold a password).
#[derive(Clone, PartialEq, Eq)]
pub struct Endpoint {
    pub host: String,
    pub port: u16,
    pub(super) user: Option<String>,
    pub(super) password: Option<String>,
    pub db: u32,
}

impl std::fmt::Debug for Endpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Endpoint")
            .field("host", &self.host)
            .field("port", &self.port)
            .field("db", &self.db)
            .finish_non_exhaustive()
    }
}

impl Endpoint {
    /// Parses a `redis://` URL. The message of an `Err` never quotes it.
    pub fn parse(url: &str) -> Result<Endpoint, String> {
        let rest = url
            .strip_prefix("redis://")
            .ok_or("it must start with redis://")?;
        if rest.contains(['?', '#']) {
            return Err("query parameters and fragments are not read: leave them out".into());
        }
        let (auth, place) = match rest.rsplit_once('@') {
            Some((auth, place)) => (Some(auth), place),
            None => (None, rest),
        };
        let (hostport, db) = place.split_once('/').unwrap_or((place, ""));
        let db = match db {
            "" => 0,
            d => d.parse().map_err(|_| "the database must be a number")?,
        };
        let (host, port) = if let Some(v6) = hostport.strip_prefix('[') {
            let (host, after) = v6.split_once(']').ok_or("an unclosed [ in the host")?;
            match after {
                "" => (host, None),
                p => (
                    host,
                    Some(p.strip_prefix(':').ok_or("junk after the host")?),
                ),
            }
        } else {
            match hostport.rsplit_once(':') {
                Some((host, port)) => (host, Some(port)),
                None => (hostport, None),
            }
        };
        if host.is_empty() {
            return Err("it names no host".into());
        }
        let port = match port {
            None => 6379,
            Some(p) => p
                .parse()
                .ok()
                .filter(|p| *p > 0)
                .ok_or("the port must be 1 to 65535")?,
        };
        let (user, password) = match auth {
            None => (None, None),
            Some(auth) => {
                let (user, password) = auth
                    .split_once(':')
                    .ok_or("a user needs a password (redis://user:password@host)")?;
                let user = Some(percent_decode(user)?).filter(|u| !u.is_empty());
                (
                    user,
                    Some(percent_decode(password)?).filter(|p| !p.is_empty()),
                )
            }
        };
        Ok(Endpoint {
            host: host.to_string(),
            port,
            user,
            password,
            db,
        })
    }
}

fn percent_decode(s: &str) -> Result<String, String> {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while let Some(&b) = bytes.get(i) {
        if b == b'%' {
            let hex = bytes
                .get(i + 1..i + 3)
                .and_then(|h| std::str::from_utf8(h).ok())
                .and_then(|h| u8::from_str_radix(h, 16).ok())
                .ok_or("a bad %-escape in the user or password")?;
            out.push(hex);
            i += 3;
        } else {
            out.push(b);
            i += 1;
        }
    }
    String::from_utf8(out).map_err(|_| "the user or password is not UTF-8".into())
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::indexing_slicing, clippy::panic)]
mod tests {
    use super::*;

    #[test]
    fn urls() {
        let e = Endpoint::parse("redis://127.0.0.1:6380/2").unwrap();
        assert_eq!(
            (e.host.as_str(), e.port, e.db, &e.user, &e.password),
            ("127.0.0.1", 6380, 2, &None, &None)
        );
        let e = Endpoint::parse("redis://:p%40ss@localhost").unwrap();
        assert_eq!(
            (e.port, e.password.as_deref(), e.user.as_deref()),
            (6379, Some("p@ss"), None)
        );
        let e = Endpoint::parse("redis://bob:pw@[::1]:7000").unwrap();
        assert_eq!(
            (e.host.as_str(), e.port, e.user.as_deref()),
            ("::1", 7000, Some("bob"))
        );
        assert!(!format!("{e:?}").contains("pw"));
        for bad in [
            "rediss://h",
            "redis://",
            "redis://h:0",
            "redis://h:x",
            "redis://h/x",
            "redis://h?db=1",
            "redis://bob@h",
            "redis://:p%zz@h",
            "redis://[::1",
        ] {
            let e = Endpoint::parse(bad).unwrap_err();
            assert!(!e.contains(bad), "{bad}: {e}");
        }
    }
}
