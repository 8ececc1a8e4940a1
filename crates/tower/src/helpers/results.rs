//! Tool results and the platform's limits on them (CONTRACT §5): text over
//! 8000 characters is offloaded (the model sees a pointer and a preview),
//! `structuredContent` over 16000 characters of JSON is dropped, images are
//! PNG, JPEG, GIF or WebP up to 5 MiB and at most 8 per result. The platform
//! applies these silently; these helpers say so while you develop. The
//! limits, how each is measured and the findings are the core's
//! (`toolctx_core::helpers::results`); this file hands it the result's JSON
//! and reports what it finds.

use rmcp::model::CallToolResult;
use toolctx_core::helpers::results as core;

pub use toolctx_core::helpers::results::{Finding as LimitFinding, LimitCode, ResultError};

/// The platform's limits (the core's constants).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Characters (code points) of text content; more is offloaded.
    pub text_chars: usize,
    /// Characters (code points) of the JSON of `structuredContent`; more is dropped.
    pub structured_chars: usize,
    /// Decoded bytes of one image.
    pub image_bytes: usize,
    /// Images per result.
    pub images: usize,
    pub image_types: [&'static str; 4],
}

pub const LIMITS: Limits = Limits {
    text_chars: core::TEXT_CHARS,
    structured_chars: core::STRUCTURED_CHARS,
    image_bytes: core::IMAGE_BYTES,
    images: core::IMAGES,
    image_types: core::IMAGE_TYPES,
};

/// The limits `result` runs into, or why the core could not read it (a
/// `structuredContent` nested deeper than the core's JSON reader allows).
pub fn try_check_result(result: &CallToolResult) -> Result<Vec<LimitFinding>, ResultError> {
    // rmcp's types always serialize; a failure would be a result the core
    // could not read either.
    let json = serde_json::to_vec(result).map_err(|_| ResultError::Shape)?;
    core::check(&json)
}

/// The limits `result` runs into; empty when it is within all of them, or
/// when [`try_check_result`] could not read it.
pub fn check_result(result: &CallToolResult) -> Vec<LimitFinding> {
    try_check_result(result).unwrap_or_default()
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
