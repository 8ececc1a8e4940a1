//! The settings vectors (`tests/vectors/settings.json`) through the core's
//! table; ends `N passed, N failed` (`-- --nocapture` shows it).
#![forbid(unsafe_code)]
#![allow(clippy::panic)]

#[test]
fn settings_vectors_pass() {
    let file = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../tests/vectors/settings.json"
    );
    if let Err(e) = toolctx_vectors::settings::run_files(
        &[file.to_string()],
        toolctx_vectors::settings::core_reading,
    ) {
        panic!("{e}");
    }
}

/// docs/CONTRACT.md §5.3's table agrees with the core's: each row's kind,
/// default and range as the table holds them.
#[test]
fn the_contracts_settings_table_is_the_cores() {
    use toolctx_core::settings::{DefaultValue, Kind, TABLE};
    let doc = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../docs/CONTRACT.md"
    ))
    .unwrap_or_default();
    for row in TABLE {
        let default = match row.default {
            DefaultValue::Required => "required".to_string(),
            DefaultValue::Flag(b) => b.to_string(),
            DefaultValue::Number(n) => n.to_string(),
            DefaultValue::Text(t) => format!("`{t}`"),
        };
        let mut line = format!("| `{}` | {} | {default}", row.name, row.kind.as_str());
        if !matches!(row.kind, Kind::Flag | Kind::Text) {
            let range = format!("{}..={}", row.min, row.max);
            let Some(at) = doc.find(&line) else {
                panic!("no row {line}")
            };
            let rest = doc.get(at..).and_then(|r| r.lines().next()).unwrap_or("");
            assert!(rest.contains(&range), "{}: {rest} lacks {range}", row.name);
            line.clear();
        }
        assert!(
            line.is_empty() || doc.contains(&line),
            "docs/CONTRACT.md has no row {line}"
        );
    }
}
