//! Tool results and the platform's limits on them (CONTRACT §5), the npm
//! package's numbers and codes (`npm/src/results.ts`; `tests/mirrors.rs`
//! compares them): text over 8000 characters is offloaded (the model sees a
//! pointer and a preview), `structuredContent` over 16000 characters of
//! JSON is dropped, images are PNG, JPEG, GIF or WebP up to 5 MiB and at
//! most 8 per result. The platform applies these silently; these helpers
//! say so while you develop.

use rmcp::model::CallToolResult;
use serde_json::Value;

/// The platform's limits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Characters (code points) of text content; more is offloaded.
    pub text_chars: usize,
    /// Characters of the compact JSON of `structuredContent`; more is dropped.
    pub structured_chars: usize,
    /// Bytes of one image.
    pub image_bytes: usize,
    /// Images per result.
    pub images: usize,
    pub image_types: [&'static str; 4],
}

pub const LIMITS: Limits = Limits {
    text_chars: 8000,
    structured_chars: 16000,
    image_bytes: 5 * 1024 * 1024,
    images: 8,
    image_types: ["image/png", "image/jpeg", "image/gif", "image/webp"],
};

/// Which limit a result runs into (the npm package's `LimitCode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LimitCode {
    TextOffloaded,
    StructuredDropped,
    ImageType,
    ImageTooLarge,
    TooManyImages,
}

impl LimitCode {
    pub const ALL: [LimitCode; 5] = [
        LimitCode::TextOffloaded,
        LimitCode::StructuredDropped,
        LimitCode::ImageType,
        LimitCode::ImageTooLarge,
        LimitCode::TooManyImages,
    ];

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
pub struct LimitFinding {
    pub code: LimitCode,
    pub message: String,
    /// What was measured (characters, bytes or images).
    pub size: usize,
    pub limit: usize,
    /// The content block concerned, when it is one block.
    pub index: Option<usize>,
}

/// The limits `result` runs into; empty when it is within all of them.
pub fn check_result(result: &CallToolResult) -> Vec<LimitFinding> {
    let mut findings = Vec::new();
    let mut text_chars = 0usize;
    let mut images = 0usize;
    for (index, block) in result.content.iter().enumerate() {
        let Ok(b) = serde_json::to_value(block) else {
            continue;
        };
        let s = |v: &Value, k: &str| v.get(k).and_then(Value::as_str).map(String::from);
        let (mime, data) = match b.get("type").and_then(Value::as_str) {
            Some("text") => {
                text_chars += s(&b, "text").map_or(0, |t| t.chars().count());
                continue;
            }
            Some("image") => (s(&b, "mimeType"), s(&b, "data")),
            Some("resource") => {
                let r = b.get("resource").cloned().unwrap_or(Value::Null);
                match (s(&r, "mimeType"), s(&r, "blob")) {
                    (Some(m), Some(blob)) if m.starts_with("image/") => (Some(m), Some(blob)),
                    _ => continue,
                }
            }
            _ => continue,
        };
        images += 1;
        let mime_ok = mime
            .as_deref()
            .is_some_and(|m| LIMITS.image_types.contains(&m));
        if !mime_ok {
            findings.push(LimitFinding {
                code: LimitCode::ImageType,
                message: format!(
                    "image {index} is {}: only PNG, JPEG, GIF and WebP images are kept",
                    mime.as_deref().unwrap_or("untyped")
                ),
                size: 0,
                limit: 0,
                index: Some(index),
            });
        }
        let bytes = base64_bytes(data.as_deref().unwrap_or(""));
        if bytes > LIMITS.image_bytes {
            findings.push(LimitFinding {
                code: LimitCode::ImageTooLarge,
                message: format!(
                    "image {index} is {bytes} bytes, over the {}-byte limit",
                    LIMITS.image_bytes
                ),
                size: bytes,
                limit: LIMITS.image_bytes,
                index: Some(index),
            });
        }
    }
    if text_chars > LIMITS.text_chars {
        findings.push(LimitFinding {
            code: LimitCode::TextOffloaded,
            message: format!(
                "the result's text is {text_chars} characters: over {} the platform offloads it and the model sees a pointer and a preview",
                LIMITS.text_chars
            ),
            size: text_chars,
            limit: LIMITS.text_chars,
            index: None,
        });
    }
    if images > LIMITS.images {
        findings.push(LimitFinding {
            code: LimitCode::TooManyImages,
            message: format!(
                "the result has {images} images, more than {}",
                LIMITS.images
            ),
            size: images,
            limit: LIMITS.images,
            index: None,
        });
    }
    if let Some(structured) = &result.structured_content {
        let chars = serde_json::to_string(structured).map_or(0, |t| t.chars().count());
        if chars > LIMITS.structured_chars {
            findings.push(LimitFinding {
                code: LimitCode::StructuredDropped,
                message: format!(
                    "structuredContent is {chars} characters of JSON: over {} the platform drops it",
                    LIMITS.structured_chars
                ),
                size: chars,
                limit: LIMITS.structured_chars,
                index: None,
            });
        }
    }
    findings
}

/// The default hook: a warning on standard error in debug builds, nothing
/// in release builds.
pub fn warn_in_development(finding: &LimitFinding) {
    if cfg!(debug_assertions) {
        eprintln!("toolctx: {}", finding.message);
    }
}

/// Runs [`check_result`] and tells `hook` each finding; returns `result`
/// unchanged.
pub fn checked_with(result: CallToolResult, hook: impl Fn(&LimitFinding)) -> CallToolResult {
    for finding in check_result(&result) {
        hook(&finding);
    }
    result
}

/// [`checked_with`] and [`warn_in_development`].
pub fn checked(result: CallToolResult) -> CallToolResult {
    checked_with(result, warn_in_development)
}

/// Decoded size of base64 text (padding left out).
fn base64_bytes(b64: &str) -> usize {
    let len = b64.trim_end_matches('=').len();
    len * 3 / 4
}

#[cfg(test)]
mod tests {
    use super::*;
    use rmcp::model::ContentBlock;

    fn codes(r: &CallToolResult) -> Vec<&'static str> {
        check_result(r).iter().map(|f| f.code.as_str()).collect()
    }

    #[test]
    fn each_limit_is_found_at_one_over() {
        let at = CallToolResult::success(vec![ContentBlock::text("é".repeat(8000))]);
        assert!(codes(&at).is_empty());
        let over = CallToolResult::success(vec![
            ContentBlock::text("a".repeat(4000)),
            ContentBlock::text("b".repeat(4001)),
        ]);
        assert_eq!(codes(&over), ["text_offloaded"]);
        // {"k":"..."}: 8 characters around the string.
        let mut structured =
            CallToolResult::success(vec![ContentBlock::text("see structuredContent")]);
        structured.structured_content = Some(serde_json::json!({ "k": "x".repeat(16000 - 8) }));
        assert!(codes(&structured).is_empty());
        structured.structured_content = Some(serde_json::json!({ "k": "x".repeat(16000 - 7) }));
        assert_eq!(codes(&structured), ["structured_dropped"]);
        let images: Vec<ContentBlock> = (0..9)
            .map(|_| ContentBlock::image("AAAA", "image/png"))
            .collect();
        assert_eq!(codes(&CallToolResult::success(images)), ["too_many_images"]);
        let bmp = CallToolResult::success(vec![ContentBlock::image("AAAA", "image/bmp")]);
        assert_eq!(codes(&bmp), ["image_type"]);
        let big = "A".repeat((5 * 1024 * 1024 + 3) / 3 * 4);
        assert_eq!(
            codes(&CallToolResult::success(vec![ContentBlock::image(
                big,
                "image/png"
            )])),
            ["image_too_large"]
        );
    }
}
