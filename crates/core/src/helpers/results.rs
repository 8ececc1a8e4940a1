//! The platform's limits on a tool result (CONTRACT §5), decided here once:
//! text over 8000 characters is offloaded (the model sees a pointer and a
//! preview), `structuredContent` over 16000 characters of JSON is dropped,
//! images are PNG, JPEG, GIF or WebP up to 5 MiB and at most 8 per result.
//! The platform applies these silently; the helpers of every front end hand
//! a result's JSON to [`check`] and show its [`Finding`]s to the server
//! author.
//!
//! How each limit is measured:
//!
//! - **Characters** are Unicode code points (an astral character is one,
//!   not two UTF-16 units, not four bytes), as the npm, Python and tower
//!   helpers counted before this module.
//! - **Text** is the sum over every `text` block of the result.
//! - **`structuredContent`** is measured on its RFC 8785 form
//!   ([`crate::jcs`]): ECMAScript's `JSON.stringify` of the value (no
//!   whitespace, `1.0` written `1`), whatever the front end's own JSON
//!   writer would print. Member order does not change the length.
//! - **Images** are `image` blocks and `resource` blocks whose `blob` is a
//!   string and whose `mimeType` starts with `image/`. An image's size is
//!   what its base64 decodes to: the base64 characters, padding (`=`) and
//!   ASCII whitespace left out, times 3/4 rounded down.
//! - `isError` changes nothing: a failed call's result is cut the same way.
//!
//! ```
//! use toolctx_core::helpers::results::{check, LimitCode};
//!
//! let text = "x".repeat(8001);
//! let result = format!(r#"{{"content":[{{"type":"text","text":"{text}"}}]}}"#);
//! let findings = check(result.as_bytes()).unwrap();
//! assert_eq!(findings[0].code, LimitCode::TextOffloaded);
//! assert_eq!((findings[0].size, findings[0].limit), (8001, 8000));
//! ```

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

use crate::jcs;
use crate::json::{self, write_str, JsonError, Value};

/// Characters (code points) of text content; more is offloaded.
pub const TEXT_CHARS: usize = 8000;
/// Characters (code points) of `structuredContent`'s JSON; more is dropped.
pub const STRUCTURED_CHARS: usize = 16000;
/// Decoded bytes of one image (5 MiB); more is dropped.
pub const IMAGE_BYTES: usize = 5 * 1024 * 1024;
/// Images per result; more are dropped.
pub const IMAGES: usize = 8;
/// The image types the platform keeps.
pub const IMAGE_TYPES: [&str; 4] = ["image/png", "image/jpeg", "image/gif", "image/webp"];

/// Which limit a result runs into.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LimitCode {
    /// The text is over [`TEXT_CHARS`]: offloaded.
    TextOffloaded,
    /// `structuredContent` is over [`STRUCTURED_CHARS`]: dropped.
    StructuredDropped,
    /// An image is not of the [`IMAGE_TYPES`].
    ImageType,
    /// An image is over [`IMAGE_BYTES`].
    ImageTooLarge,
    /// More than [`IMAGES`] images.
    TooManyImages,
}

impl LimitCode {
    /// Every code, in the order the front ends list them.
    pub const ALL: [LimitCode; 5] = [
        LimitCode::TextOffloaded,
        LimitCode::StructuredDropped,
        LimitCode::ImageType,
        LimitCode::ImageTooLarge,
        LimitCode::TooManyImages,
    ];

    /// The stable machine code.
    pub const fn as_str(self) -> &'static str {
        match self {
            LimitCode::TextOffloaded => "text_offloaded",
            LimitCode::StructuredDropped => "structured_dropped",
            LimitCode::ImageType => "image_type",
            LimitCode::ImageTooLarge => "image_too_large",
            LimitCode::TooManyImages => "too_many_images",
        }
    }
}

/// One limit a result runs into, and what the platform will do about it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    pub code: LimitCode,
    /// For the server author, in English.
    pub message: String,
    /// What was measured: characters, bytes or images (0 for
    /// [`LimitCode::ImageType`]).
    pub size: usize,
    /// The limit it was measured against (0 for [`LimitCode::ImageType`]).
    pub limit: usize,
    /// The content block concerned, when it is one block.
    pub index: Option<usize>,
}

impl Finding {
    /// `{"code","message","size","limit","index"}` (`index` only when
    /// there is one): what a binding hands its language.
    pub fn write_json(&self, out: &mut String) {
        out.push_str("{\"code\":\"");
        out.push_str(self.code.as_str());
        out.push_str("\",\"message\":");
        write_str(&self.message, out);
        out.push_str(&format!(",\"size\":{},\"limit\":{}", self.size, self.limit));
        if let Some(index) = self.index {
            out.push_str(&format!(",\"index\":{index}"));
        }
        out.push('}');
    }
}

/// Why a result could not be checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ResultError {
    /// Not JSON the core reads (a lone surrogate, a duplicate member,
    /// nesting over [`json::MAX_DEPTH`]).
    Json(JsonError),
    /// Not an object, or its `content` is neither absent, `null` nor an
    /// array.
    Shape,
    /// `structuredContent` holds a number with no finite double, so it has
    /// no `JSON.stringify` form to measure.
    Number,
}

impl ResultError {
    /// The stable machine code.
    pub const fn code(self) -> &'static str {
        match self {
            ResultError::Json(_) => "result_not_json",
            ResultError::Shape => "result_shape",
            ResultError::Number => "result_number",
        }
    }
}

impl core::fmt::Display for ResultError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            ResultError::Json(e) => write!(f, "the result is not JSON the platform reads: {e}"),
            ResultError::Shape => {
                f.write_str("the result is not an object whose content is an array")
            }
            ResultError::Number => {
                f.write_str("structuredContent holds a number out of the IEEE 754 double range")
            }
        }
    }
}

impl core::error::Error for ResultError {}

/// The limits the result `result_json` (a `tools/call` result, MCP
/// `CallToolResult`, as JSON) runs into, in this order: each image's type
/// and size by block, then the text, the image count, `structuredContent`.
/// Empty when it is within all of them.
pub fn check(result_json: &[u8]) -> Result<Vec<Finding>, ResultError> {
    let result = json::parse(result_json).map_err(ResultError::Json)?;
    if !result.is_object() {
        return Err(ResultError::Shape);
    }
    let blocks: &[Value<'_>] = match result.get("content") {
        None | Some(Value::Null) => &[],
        Some(Value::Array(blocks)) => blocks,
        Some(_) => return Err(ResultError::Shape),
    };
    let mut findings = Vec::new();
    let mut text_chars = 0usize;
    let mut images = 0usize;
    for (index, block) in blocks.iter().enumerate() {
        let (mime, data) = match block.get("type").and_then(Value::as_str) {
            Some("text") => {
                text_chars += block
                    .get("text")
                    .and_then(Value::as_str)
                    .map_or(0, |t| t.chars().count());
                continue;
            }
            Some("image") => (
                block.get("mimeType").and_then(Value::as_str),
                block.get("data").and_then(Value::as_str),
            ),
            Some("resource") => {
                let resource = block.get("resource");
                let mime = resource
                    .and_then(|r| r.get("mimeType"))
                    .and_then(Value::as_str);
                let blob = resource.and_then(|r| r.get("blob")).and_then(Value::as_str);
                match (mime, blob) {
                    (Some(m), Some(b)) if m.starts_with("image/") => (Some(m), Some(b)),
                    _ => continue,
                }
            }
            _ => continue,
        };
        images += 1;
        if !mime.is_some_and(|m| IMAGE_TYPES.contains(&m)) {
            let shown = mime.filter(|m| !m.is_empty()).unwrap_or("untyped");
            findings.push(Finding {
                code: LimitCode::ImageType,
                message: format!(
                    "image {index} is {shown}: only PNG, JPEG, GIF and WebP images are kept"
                ),
                size: 0,
                limit: 0,
                index: Some(index),
            });
        }
        let bytes = base64_decoded_len(data.unwrap_or(""));
        if bytes > IMAGE_BYTES {
            findings.push(Finding {
                code: LimitCode::ImageTooLarge,
                message: format!(
                    "image {index} is {bytes} bytes, over the {IMAGE_BYTES}-byte limit"
                ),
                size: bytes,
                limit: IMAGE_BYTES,
                index: Some(index),
            });
        }
    }
    if text_chars > TEXT_CHARS {
        findings.push(Finding {
            code: LimitCode::TextOffloaded,
            message: format!(
                "the result's text is {text_chars} characters: over {TEXT_CHARS} the platform offloads it and the model sees a pointer and a preview"
            ),
            size: text_chars,
            limit: TEXT_CHARS,
            index: None,
        });
    }
    if images > IMAGES {
        findings.push(Finding {
            code: LimitCode::TooManyImages,
            message: format!("the result has {images} images, more than {IMAGES}"),
            size: images,
            limit: IMAGES,
            index: None,
        });
    }
    if let Some(structured) = result.get("structuredContent") {
        let chars = structured_chars(structured)?;
        if chars > STRUCTURED_CHARS {
            findings.push(Finding {
                code: LimitCode::StructuredDropped,
                message: format!(
                    "structuredContent is {chars} characters of JSON: over {STRUCTURED_CHARS} the platform drops it"
                ),
                size: chars,
                limit: STRUCTURED_CHARS,
                index: None,
            });
        }
    }
    Ok(findings)
}

/// Code points of the RFC 8785 (`JSON.stringify`) form of `v`.
fn structured_chars(v: &Value<'_>) -> Result<usize, ResultError> {
    let text = jcs::canonicalize(v).map_err(|_| ResultError::Number)?;
    Ok(text.chars().count())
}

/// What base64 text decodes to, in bytes: its characters other than
/// padding and ASCII whitespace (line breaks of MIME base64), times 3/4
/// rounded down. Characters outside the alphabet count as base64 ones: the
/// size is an estimate for a warning, not a decoder.
pub fn base64_decoded_len(b64: &str) -> usize {
    let n = b64
        .chars()
        .filter(|&c| c != '=' && !matches!(c, ' ' | '\t' | '\n' | '\r' | '\x0c'))
        .count();
    // n * 3 / 4 without overflowing for any n a usize holds.
    n / 4 * 3 + n % 4 * 3 / 4
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::string::ToString;

    fn codes(json: &str) -> Vec<&'static str> {
        check(json.as_bytes())
            .unwrap()
            .iter()
            .map(|f| f.code.as_str())
            .collect()
    }

    fn text_result(parts: &[String]) -> String {
        let blocks: Vec<String> = parts
            .iter()
            .map(|t| {
                let mut s = String::from("{\"type\":\"text\",\"text\":");
                write_str(t, &mut s);
                s.push('}');
                s
            })
            .collect();
        format!("{{\"content\":[{}]}}", blocks.join(","))
    }

    #[test]
    fn text_counts_code_points_over_all_blocks() {
        assert!(codes(&text_result(&["é".repeat(8000)])).is_empty());
        assert!(codes(&text_result(&["😀".repeat(8000)])).is_empty());
        assert_eq!(
            codes(&text_result(&["a".repeat(4000), "b".repeat(4001)])),
            ["text_offloaded"]
        );
        // An escaped astral character is one character too.
        let escaped = format!(
            "{{\"content\":[{{\"type\":\"text\",\"text\":\"{}\\ud83d\\ude00\"}}]}}",
            "a".repeat(7999)
        );
        assert!(codes(&escaped).is_empty());
    }

    #[test]
    fn structured_content_is_measured_as_json_stringify_writes_it() {
        // {"k":"..."}: 8 characters around the string.
        let at = format!(
            "{{\"structuredContent\":{{\"k\":\"{}\"}}}}",
            "x".repeat(16000 - 8)
        );
        assert!(codes(&at).is_empty());
        let over = format!(
            "{{\"structuredContent\":{{\"k\":\"{}\"}}}}",
            "x".repeat(16000 - 7)
        );
        assert_eq!(codes(&over), ["structured_dropped"]);
        // Whitespace and `1.0` as written do not count: `[1,1,...]` is 15999.
        let spaced = format!(
            "{{\"structuredContent\" : [ {} 1.0 ]}}",
            "1.0 , ".repeat(7998)
        );
        assert!(codes(&spaced).is_empty());
        assert_eq!(
            check(br#"{"structuredContent":1e400}"#),
            Err(ResultError::Number)
        );
    }

    #[test]
    fn images_by_type_size_and_count() {
        let img = |data: &str, mime: &str| {
            format!("{{\"type\":\"image\",\"data\":\"{data}\",\"mimeType\":\"{mime}\"}}")
        };
        let eight: Vec<String> = (0..8).map(|_| img("AAAA", "image/png")).collect();
        assert!(codes(&format!("{{\"content\":[{}]}}", eight.join(","))).is_empty());
        let nine: Vec<String> = (0..9).map(|_| img("AAAA", "image/webp")).collect();
        assert_eq!(
            codes(&format!("{{\"content\":[{}]}}", nine.join(","))),
            ["too_many_images"]
        );
        let bmp = check(format!("{{\"content\":[{}]}}", img("", "image/bmp")).as_bytes()).unwrap();
        assert_eq!(bmp[0].code, LimitCode::ImageType);
        assert_eq!(bmp[0].index, Some(0));
        let at = "A".repeat(IMAGE_BYTES / 3 * 4 + 3) + "=";
        assert_eq!(base64_decoded_len(&at), IMAGE_BYTES);
        assert!(codes(&format!("{{\"content\":[{}]}}", img(&at, "image/gif"))).is_empty());
        let over = "A".repeat(IMAGE_BYTES / 3 * 4 + 4);
        assert_eq!(
            codes(&format!("{{\"content\":[{}]}}", img(&over, "image/jpeg"))),
            ["image_too_large"]
        );
        assert_eq!(base64_decoded_len("AAAA\r\nAAAA\n"), 6);
        assert_eq!(base64_decoded_len("AA=="), 1);
        assert_eq!(base64_decoded_len("AAA="), 2);
    }

    #[test]
    fn resources_count_as_images_only_with_an_image_blob() {
        let r = |mime: &str| {
            format!(
                "{{\"type\":\"resource\",\"resource\":{{\"uri\":\"x:\",\"mimeType\":\"{mime}\",\"blob\":\"AAAA\"}}}}"
            )
        };
        let nine: Vec<String> = (0..9).map(|_| r("image/png")).collect();
        assert_eq!(
            codes(&format!("{{\"content\":[{}]}}", nine.join(","))),
            ["too_many_images"]
        );
        let texts: Vec<String> = (0..9).map(|_| r("text/plain")).collect();
        assert!(codes(&format!("{{\"content\":[{}]}}", texts.join(","))).is_empty());
        assert_eq!(
            codes(&format!("{{\"content\":[{}]}}", r("image/tiff"))),
            ["image_type"]
        );
    }

    #[test]
    fn findings_as_json_and_refusals() {
        let f = Finding {
            code: LimitCode::ImageType,
            message: "a \"b\"".to_string(),
            size: 0,
            limit: 0,
            index: Some(3),
        };
        let mut out = String::new();
        f.write_json(&mut out);
        assert_eq!(
            out,
            r#"{"code":"image_type","message":"a \"b\"","size":0,"limit":0,"index":3}"#
        );
        assert_eq!(check(b"[]"), Err(ResultError::Shape));
        assert_eq!(check(br#"{"content":{}}"#), Err(ResultError::Shape));
        assert!(matches!(check(b"{"), Err(ResultError::Json(_))));
        assert!(matches!(
            check(br#"{"content":[{"type":"text","text":"\ud800"}]}"#),
            Err(ResultError::Json(_))
        ));
        assert_eq!(check(br#"{"content":null,"isError":true}"#), Ok(Vec::new()));
    }
}
