//! Steps 0 to 7 of CONTRACT §2 (method, credential, body size, strict JSON,
//! batch, shape, MCP headers): the part every profile shares. The AgentArea
//! verifier (`verify.rs`) and the AIVAX one (`aivax.rs`) run their own
//! checks on the [`Call`] it hands on.

use alloc::boxed::Box;
use alloc::string::String;
use core::sync::atomic::{AtomicUsize, Ordering};

use crate::b64;
use crate::config::Credential;
use crate::json::{self, write_str, Item, JsonError, Keep, Kind, Members};
use crate::reason::Reason;
use crate::refusal::Refusal;
use crate::verdict::{Checked, HeadersVerdict, Sealed, Verdict};

const MCP_METHOD_HEADER: &str = "mcp-method";
const MCP_NAME_HEADER: &str = "mcp-name";
/// The MCP headers the envelope reads (step 7); with the credential's, the
/// only request headers it reads.
pub(crate) const MCP_HEADERS: [&str; 2] = [MCP_METHOD_HEADER, MCP_NAME_HEADER];
pub(crate) const TOOLS_CALL: &str = "tools/call";
/// The only HTTP method whose body is read (step 0).
const POST: &str = "POST";

/// Whether the envelope read the body of a request with this HTTP method
/// whose verdict is `refused` (`None`: not a refusal): not for another
/// method than POST (step 0), nor after a refusal at step 1 or 2
/// (credential, size), which come before the body is read.
pub(crate) fn reads_body(method: &str, refused: Option<Reason>) -> bool {
    method == POST
        && !matches!(
            refused,
            Some(Reason::CredentialMissing | Reason::CredentialInvalid | Reason::BodyTooLarge)
        )
}

pub(crate) enum Lookup<'h> {
    Missing,
    Once(&'h [u8]),
    Many,
}

pub(crate) fn header<'h, N: AsRef<[u8]>, V: AsRef<[u8]>>(
    headers: &'h [(N, V)],
    name: &str,
) -> Lookup<'h> {
    let mut found = Lookup::Missing;
    for (n, v) in headers {
        if n.as_ref().eq_ignore_ascii_case(name.as_bytes()) {
            found = match found {
                Lookup::Missing => Lookup::Once(v.as_ref()),
                _ => return Lookup::Many,
            };
        }
    }
    found
}

/// Constant-time equality; the running time depends only on `expected`'s length.
pub(crate) fn ct_eq(expected: &[u8], given: &[u8]) -> bool {
    let mut diff = u8::from(expected.len() != given.len());
    for (i, e) in expected.iter().enumerate() {
        diff |= e ^ given.get(i).copied().unwrap_or(0);
    }
    core::hint::black_box(diff) == 0
}

fn json_refusal(e: JsonError) -> Reason {
    match e {
        JsonError::Syntax => Reason::ParseError,
        JsonError::Duplicate => Reason::DuplicateMember,
        JsonError::TooDeep => Reason::TooDeep,
    }
}

/// The string member `name` of an object.
pub(crate) fn get_str<'d>(obj: Item<'d, '_>, name: &str) -> Option<&'d str> {
    obj.get(name).and_then(Item::as_str)
}

/// Step 1: the refusal when the static credential is configured and the
/// headers do not carry it once with an accepted value.
fn credential_refusal<N: AsRef<[u8]>, V: AsRef<[u8]>>(
    credential: Option<&Credential>,
    headers: &[(N, V)],
) -> Option<Refusal> {
    let cred = credential?;
    let reason = match header(headers, &cred.header) {
        Lookup::Missing => Reason::CredentialMissing,
        Lookup::Many => Reason::CredentialInvalid,
        Lookup::Once(given) => {
            // Every accepted value is compared, matched or not.
            let ok = cred
                .values
                .iter()
                .fold(false, |ok, v| ct_eq(v.as_bytes(), given) | ok);
            if ok {
                return None;
            }
            Reason::CredentialInvalid
        }
    };
    Some(Refusal::new(reason, None))
}

/// A new verifier's identity, for the [`Checked`] proofs it hands out.
pub(crate) fn next_verifier_id() -> usize {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    NEXT.fetch_add(1, Ordering::Relaxed)
}

/// A single `tools/call` that passed steps 0 to 7.
pub(crate) struct Call<'d, 'b> {
    /// `params.name`.
    pub name: &'d str,
    /// `params._meta`, an object, when present.
    pub meta: Option<Item<'d, 'b>>,
    /// `params.arguments`, when present and the envelope was asked to
    /// keep it ([`Envelope::keeping_arguments`]).
    #[cfg(feature = "policy")]
    pub arguments: Option<Item<'d, 'b>>,
}

impl<'d, 'b> Call<'d, 'b> {
    /// The members of `params._meta` (none when absent), in document order.
    pub fn meta_members(&self) -> Members<'d, 'b> {
        self.meta.map_or(Members::NONE, Item::members)
    }
}

/// Steps 0 to 7, the part of the contract every profile shares.
pub(crate) struct Envelope<'c> {
    /// The verifier's identity (see [`next_verifier_id`]).
    verifier: usize,
    credential: Option<&'c Credential>,
    max_body_bytes: usize,
    /// How much of the body to record: the request's parts, with
    /// `params.arguments` when a policy reads them.
    #[cfg(feature = "policy")]
    keep: Keep,
}

impl<'c> Envelope<'c> {
    pub fn new(
        verifier: usize,
        credential: Option<&'c Credential>,
        max_body_bytes: usize,
    ) -> Envelope<'c> {
        Envelope {
            verifier,
            credential,
            max_body_bytes,
            #[cfg(feature = "policy")]
            keep: Keep::Request,
        }
    }

    /// The envelope recording `params.arguments` too (a policy reads them).
    #[cfg(feature = "policy")]
    pub fn keeping_arguments(mut self) -> Envelope<'c> {
        self.keep = Keep::RequestArguments;
        self
    }

    /// Steps 0 and 1: `Pass` for anything but `POST`, then the static
    /// credential; `ReadBody` carries the proof for [`Envelope::body`].
    pub fn headers<N: AsRef<[u8]>, V: AsRef<[u8]>>(
        &self,
        method: &str,
        headers: &[(N, V)],
    ) -> HeadersVerdict {
        if method != POST {
            return HeadersVerdict::Pass;
        }
        match credential_refusal(self.credential, headers) {
            Some(r) => HeadersVerdict::Reject(r),
            None => HeadersVerdict::ReadBody(Checked {
                verifier: self.verifier,
            }),
        }
    }

    /// Steps 2 to 7 after a passing [`Envelope::headers`], then `rest` on
    /// the call; a refusal from `rest` carries the request's id. A proof
    /// from another verifier does not vouch for this one's credential:
    /// step 1 then runs here.
    pub fn body<N: AsRef<[u8]>, V: AsRef<[u8]>, T: Sealed>(
        &self,
        checked: Checked,
        headers: &[(N, V)],
        body: &[u8],
        rest: impl FnOnce(Call<'_, '_>) -> Result<Option<T>, Reason>,
    ) -> Verdict<T> {
        if checked.verifier != self.verifier {
            if let Some(r) = credential_refusal(self.credential, headers) {
                return Verdict::Reject(r);
            }
        }
        let early = |reason| Verdict::Reject(Refusal::new(reason, None));
        // Step 2.
        if body.len() > self.max_body_bytes {
            return early(Reason::BodyTooLarge);
        }
        // Step 3.
        // Without the policy, nothing reads the arguments.
        #[cfg(feature = "policy")]
        let keep = self.keep;
        #[cfg(not(feature = "policy"))]
        let keep = Keep::Request;
        let doc = match json::read(body, keep) {
            Ok(doc) => doc,
            Err(e) => return early(json_refusal(e)),
        };
        let Some(request) = doc.root() else {
            return early(Reason::ParseError);
        };
        // Steps 4 and 5.
        let is_call = |v: Item<'_, '_>| get_str(v, "method") == Some(TOOLS_CALL);
        match request.kind() {
            Kind::Array if request.elements().any(is_call) => {
                return early(Reason::BatchWithToolsCall)
            }
            Kind::Object if is_call(request) => {}
            _ => return Verdict::Pass,
        }
        let id = request.get("id").and_then(|id| match id.kind() {
            Kind::String => {
                let mut text = String::new();
                write_str(id.as_str().unwrap_or_default(), &mut text);
                Some(text)
            }
            Kind::Number => Some(String::from(id.text())),
            _ => None,
        });
        match call_shape(request, headers).and_then(rest) {
            Ok(Some(mut accepted)) => {
                accepted.set_request_id(id);
                Verdict::Accept(Box::new(accepted))
            }
            Ok(None) => Verdict::Pass,
            Err(reason) => Verdict::Reject(Refusal::new(reason, id)),
        }
    }
}

/// Steps 6 and 7 on a `tools/call` request object.
fn call_shape<'d, 'b, N: AsRef<[u8]>, V: AsRef<[u8]>>(
    request: Item<'d, 'b>,
    headers: &[(N, V)],
) -> Result<Call<'d, 'b>, Reason> {
    // Step 6.
    let params = request
        .get("params")
        .filter(|p| p.is_object())
        .ok_or(Reason::InvalidParams)?;
    let name = get_str(params, "name").ok_or(Reason::InvalidParams)?;
    let meta = params.get("_meta");
    if meta.is_some_and(|m| !m.is_object()) {
        return Err(Reason::InvalidParams);
    }
    // Step 7.
    match header(headers, MCP_METHOD_HEADER) {
        Lookup::Missing => {}
        Lookup::Once(v) if v == TOOLS_CALL.as_bytes() => {}
        _ => return Err(Reason::HeaderMismatch),
    }
    match header(headers, MCP_NAME_HEADER) {
        Lookup::Missing => {}
        Lookup::Once(v) if mcp_name_matches(v, name) => {}
        _ => return Err(Reason::HeaderMismatch),
    }
    Ok(Call {
        name,
        meta,
        #[cfg(feature = "policy")]
        arguments: params.get("arguments"),
    })
}

/// `Mcp-Name` against `params.name`, decoding the `=?base64?…?=` form.
fn mcp_name_matches(header: &[u8], name: &str) -> bool {
    let encoded = header
        .strip_prefix(b"=?base64?")
        .and_then(|rest| rest.strip_suffix(b"?="));
    match encoded {
        Some(encoded) => b64::STD
            .decode_padded(encoded)
            .is_some_and(|bytes| bytes == name.as_bytes()),
        None => header == name.as_bytes(),
    }
}
