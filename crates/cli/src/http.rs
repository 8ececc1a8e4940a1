//! A small blocking MCP client over Streamable HTTP: plain HTTP/1.1 to the
//! one URL given, no proxy, no redirects. Responses may be
//! `application/json` or a `text/event-stream` whose messages are handed to
//! the caller as they arrive.

use std::io::{BufRead as _, BufReader, Read};
use std::time::Duration;

use serde_json::{json, Map, Value as J};

use crate::common::{usage, Error};

/// The MCP revision asked for in `initialize`; the server's answer is used after.
pub const PROTOCOL_VERSION: &str = "2025-11-25";
const ACCEPT: &str = "application/json, text/event-stream";
const MAX_BODY: u64 = 64 * 1024 * 1024;

/// What came back for one POST.
#[derive(Debug, Default)]
pub struct Reply {
    pub status: u16,
    pub content_type: String,
    /// JSON-RPC messages, in order (SSE events or the JSON body).
    pub messages: Vec<J>,
    /// The body when it was not JSON-RPC (kept for error reports).
    pub text: String,
    pub session_id: Option<String>,
}

impl Reply {
    /// The JSON-RPC response (a message with `result` or `error`), if any.
    pub fn response(&self) -> Option<&J> {
        self.messages
            .iter()
            .find(|m| m.get("result").is_some() || m.get("error").is_some())
    }

    /// The body as text: as received when it was not an event stream,
    /// else the JSON-RPC response.
    pub fn body_text(&self) -> String {
        if !self.text.is_empty() {
            return self.text.trim_end().to_string();
        }
        match self.response() {
            Some(r) => r.to_string(),
            None if self.messages.len() == 1 => {
                self.messages.first().map(J::to_string).unwrap_or_default()
            }
            None => self.text.clone(),
        }
    }
}

/// One MCP server endpoint.
pub struct Client {
    agent: ureq::Agent,
    url: String,
    /// Sent with every request (`--header`).
    headers: Vec<(String, String)>,
    session: Option<String>,
    protocol: Option<String>,
}

fn net(url: &str, e: ureq::Error) -> Error {
    Error::Unreachable(format!("{url}: {e}"))
}

impl Client {
    pub fn new(
        url: &str,
        timeout: Duration,
        headers: Vec<(String, String)>,
    ) -> Result<Client, Error> {
        if !url.starts_with("http://") {
            return Err(usage(format!(
                "{url}: only plain http:// URLs are supported (the CLI has no TLS; put it in front of a local server or proxy)"
            )));
        }
        let agent: ureq::Agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            // Only the URL given: no proxy from the environment, no redirects.
            .proxy(None)
            .max_redirects(0)
            .timeout_global(Some(timeout))
            .user_agent(concat!("toolctx/", env!("CARGO_PKG_VERSION")))
            .build()
            .into();
        Ok(Client {
            agent,
            url: url.to_string(),
            headers,
            session: None,
            protocol: None,
        })
    }

    pub fn url(&self) -> &str {
        &self.url
    }

    /// POSTs `body` with the client's headers and then `extra` (repeats
    /// kept). `on_message` sees each JSON-RPC message as it arrives; reading
    /// stops after the first response.
    pub fn post(
        &self,
        extra: &[(String, String)],
        body: Vec<u8>,
        on_message: &mut dyn FnMut(&J),
    ) -> Result<Reply, Error> {
        let mut req = self
            .agent
            .post(&self.url)
            .header("content-type", "application/json")
            .header("accept", ACCEPT);
        if let Some(s) = &self.session {
            req = req.header("mcp-session-id", s);
        }
        if let Some(p) = &self.protocol {
            req = req.header("mcp-protocol-version", p);
        }
        for (n, v) in self.headers.iter().chain(extra) {
            req = req.header(n, v);
        }
        let resp = req.send(&body[..]).map_err(|e| net(&self.url, e))?;
        let status = resp.status().as_u16();
        let header = |name: &str| {
            resp.headers()
                .get(name)
                .and_then(|v| v.to_str().ok())
                .map(str::to_string)
        };
        let content_type = header("content-type").unwrap_or_default();
        let session_id = header("mcp-session-id");
        let mut reply = Reply {
            status,
            content_type: content_type.clone(),
            session_id,
            ..Reply::default()
        };
        let reader = resp.into_body().into_with_config().limit(MAX_BODY).reader();
        if content_type
            .to_ascii_lowercase()
            .starts_with("text/event-stream")
        {
            read_sse(reader, &mut |m| {
                on_message(&m);
                let done = m.get("result").is_some() || m.get("error").is_some();
                reply.messages.push(m);
                done
            })
            .map_err(|e| {
                Error::Unreachable(format!("{}: reading the event stream: {e}", self.url))
            })?;
        } else {
            let mut bytes = Vec::new();
            let mut reader = reader;
            reader.read_to_end(&mut bytes).map_err(|e| {
                Error::Unreachable(format!("{}: reading the response: {e}", self.url))
            })?;
            let text = String::from_utf8_lossy(&bytes).into_owned();
            match serde_json::from_slice::<J>(&bytes) {
                Ok(J::Array(items)) => reply.messages = items,
                Ok(m @ J::Object(_)) => reply.messages = vec![m],
                _ => {}
            }
            for m in &reply.messages {
                on_message(m);
            }
            reply.text = text;
        }
        Ok(reply)
    }

    /// A JSON-RPC request or notification with the client's headers.
    pub fn rpc(
        &self,
        extra: &[(String, String)],
        id: Option<J>,
        method: &str,
        params: J,
    ) -> Result<Reply, Error> {
        let mut msg = Map::new();
        msg.insert("jsonrpc".into(), J::from("2.0"));
        if let Some(id) = id {
            msg.insert("id".into(), id);
        }
        msg.insert("method".into(), J::from(method));
        msg.insert("params".into(), params);
        self.post(extra, J::Object(msg).to_string().into_bytes(), &mut |_| {})
    }

    /// `initialize` then `notifications/initialized`; keeps the session id
    /// and protocol version the server chose. `Ok(Some(reply))` when the
    /// server answered without a result (a refusal, an error).
    pub fn initialize(&mut self, extra: &[(String, String)]) -> Result<Option<Reply>, Error> {
        let params = json!({
            "protocolVersion": PROTOCOL_VERSION,
            "capabilities": {},
            "clientInfo": {"name": "toolctx", "version": env!("CARGO_PKG_VERSION")},
        });
        let reply = self.rpc(extra, Some(J::from(0)), "initialize", params)?;
        let Some(result) = reply.response().and_then(|r| r.get("result")) else {
            return Ok(Some(reply));
        };
        self.protocol = result
            .get("protocolVersion")
            .and_then(J::as_str)
            .map(str::to_string);
        self.session = reply.session_id;
        self.rpc(extra, None, "notifications/initialized", json!({}))?;
        Ok(None)
    }

    /// [`Client::initialize`], with an answer that is not a result as an error.
    pub fn must_initialize(&mut self, extra: &[(String, String)]) -> Result<(), Error> {
        match self.initialize(extra)? {
            None => Ok(()),
            Some(reply) => Err(Error::Unreachable(format!(
                "{}: initialize failed: HTTP {} {}",
                self.url,
                reply.status,
                clip(&one_line(&reply.body_text()), 300)
            ))),
        }
    }

    /// The tool names from `tools/list`.
    pub fn tool_names(&self, extra: &[(String, String)]) -> Result<Vec<String>, Error> {
        let reply = self.rpc(extra, Some(J::from("tools")), "tools/list", json!({}))?;
        let tools = reply
            .response()
            .and_then(|r| r.pointer("/result/tools"))
            .and_then(J::as_array)
            .ok_or_else(|| {
                Error::Unreachable(format!(
                    "{}: tools/list failed: HTTP {} {}",
                    self.url,
                    reply.status,
                    clip(&one_line(&reply.body_text()), 300)
                ))
            })?;
        Ok(tools
            .iter()
            .filter_map(|t| t.get("name").and_then(J::as_str).map(str::to_string))
            .collect())
    }

    /// Ends the session, if the server opened one (errors are ignored).
    pub fn close(&self) {
        if let Some(s) = &self.session {
            let _ = self
                .agent
                .delete(&self.url)
                .header("mcp-session-id", s)
                .call();
        }
    }
}

/// Reads `text/event-stream` events; `on_message` gets each `data` that is
/// JSON and returns `true` to stop reading.
fn read_sse(reader: impl Read, on_message: &mut dyn FnMut(J) -> bool) -> std::io::Result<()> {
    let mut reader = BufReader::new(reader);
    let mut data = String::new();
    let mut line = String::new();
    loop {
        line.clear();
        let n = reader.read_line(&mut line)?;
        let l = line.trim_end_matches(['\r', '\n']);
        if n == 0 || l.is_empty() {
            if !data.is_empty() {
                if let Ok(m) = serde_json::from_str::<J>(&data) {
                    if on_message(m) {
                        return Ok(());
                    }
                }
                data.clear();
            }
            if n == 0 {
                return Ok(());
            }
            continue;
        }
        if let Some(rest) = l.strip_prefix("data:") {
            if !data.is_empty() {
                data.push('\n');
            }
            data.push_str(rest.strip_prefix(' ').unwrap_or(rest));
        }
        // `event:`, `id:`, `retry:` and `:` comments carry nothing needed here.
    }
}

/// Whitespace runs as single spaces: a body on one line.
pub fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The first `n` characters, with `…` when cut.
pub fn clip(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_string()
    } else {
        let mut out: String = s.chars().take(n).collect();
        out.push('…');
        out
    }
}

/// `Mcp-Name` for a tool: the name itself when it is printable ASCII, else
/// the `=?base64?...?=` form of the 2026-07-28 revision.
pub fn mcp_name_header(tool: &str) -> String {
    use base64::Engine as _;
    if tool.bytes().all(|b| (0x20..0x7f).contains(&b)) && !tool.starts_with("=?") {
        tool.to_string()
    } else {
        format!(
            "=?base64?{}?=",
            base64::engine::general_purpose::STANDARD.encode(tool)
        )
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::indexing_slicing)]
mod tests {
    use super::*;

    #[test]
    fn sse_events_split_and_stop_after_a_response() {
        let stream = "event: message\ndata: {\"method\":\"notifications/progress\",\"params\":{\"progress\":1}}\n\n\
                      : comment\r\ndata: {\"id\":1,\r\ndata: \"result\":{}}\r\n\r\n\
                      data: {\"never\":true}\n\n";
        let mut seen = Vec::new();
        read_sse(stream.as_bytes(), &mut |m| {
            let done = m.get("result").is_some();
            seen.push(m);
            done
        })
        .unwrap();
        assert_eq!(seen.len(), 2);
        assert_eq!(seen[1]["id"], 1);
    }

    #[test]
    fn sse_without_final_blank_line() {
        let mut seen = Vec::new();
        read_sse("data: {\"a\":1}".as_bytes(), &mut |m| {
            seen.push(m);
            false
        })
        .unwrap();
        assert_eq!(seen.len(), 1);
    }

    #[test]
    fn mcp_name_encoding() {
        assert_eq!(mcp_name_header("get_order"), "get_order");
        assert_eq!(mcp_name_header("заказ"), "=?base64?0LfQsNC60LDQtw==?=");
    }
}
