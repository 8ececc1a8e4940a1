//! Model-facing tool names (CONTRACT §6): `mcp__<server>__<tool>`, at most
//! 64 characters. Policy rules are written against these names, so the
//! function is exact and every table it uses is written out here.
//!
//! - `<tool>`: each character outside `[a-zA-Z0-9_-]` becomes `_`.
//! - `<server>`, from an ASCII-only instance name: lowercased, each
//!   character outside `[a-zA-Z0-9_-]` becomes `_` (`My GitHub!` →
//!   `my_github_`).
//! - `<server>`, from any other name: lowercased; Cyrillic letters
//!   transliterated with [`CYRILLIC`]; Latin letters with diacritics reduced
//!   to their base letter with [`LATIN`] (and combining marks U+0300..U+036F
//!   dropped, so decomposed input gives the same result); ASCII letters,
//!   digits and `-` are kept; every run of anything else (including `_`)
//!   becomes one `_`; leading and trailing `_` are trimmed. Nothing left
//!   gives `server`.
//! - A name over 64 characters keeps its first 55 characters, then `_`, then
//!   the first 8 lowercase hex digits of SHA-256 over the whole uncut name.

use alloc::string::String;
use sha2::{Digest, Sha256};

/// The longest name the platform offers a model.
pub const MAX_TOOL_NAME: usize = 64;
const DIGEST_CHARS: usize = 8;

/// Russian, Ukrainian, Belarusian, Serbian and Macedonian letters (lower
/// case), after the scheme used for Russian passports since 2014
/// (ICAO Doc 9303), extended to the other alphabets; hard and soft signs
/// drop out.
pub const CYRILLIC: &[(char, &str)] = &[
    ('а', "a"),
    ('б', "b"),
    ('в', "v"),
    ('г', "g"),
    ('д', "d"),
    ('е', "e"),
    ('ё', "e"),
    ('ж', "zh"),
    ('з', "z"),
    ('и', "i"),
    ('й', "i"),
    ('к', "k"),
    ('л', "l"),
    ('м', "m"),
    ('н', "n"),
    ('о', "o"),
    ('п', "p"),
    ('р', "r"),
    ('с', "s"),
    ('т', "t"),
    ('у', "u"),
    ('ф', "f"),
    ('х', "kh"),
    ('ц', "ts"),
    ('ч', "ch"),
    ('ш', "sh"),
    ('щ', "shch"),
    ('ъ', ""),
    ('ы', "y"),
    ('ь', ""),
    ('э', "e"),
    ('ю', "iu"),
    ('я', "ia"),
    ('є', "ie"),
    ('і', "i"),
    ('ї', "i"),
    ('ґ', "g"),
    ('ў', "u"),
    ('ђ', "dj"),
    ('ј', "j"),
    ('љ', "lj"),
    ('њ', "nj"),
    ('ћ', "c"),
    ('џ', "dz"),
    ('ѓ', "gj"),
    ('ќ', "kj"),
    ('ѕ', "dz"),
];

/// Latin letters with diacritics (Latin-1 Supplement and Latin Extended-A,
/// lower case) and their base letters; ligatures and special letters are
/// spelled out.
pub const LATIN: &[(char, &str)] = &[
    ('à', "a"),
    ('á', "a"),
    ('â', "a"),
    ('ã', "a"),
    ('ä', "a"),
    ('å', "a"),
    ('æ', "ae"),
    ('ç', "c"),
    ('è', "e"),
    ('é', "e"),
    ('ê', "e"),
    ('ë', "e"),
    ('ì', "i"),
    ('í', "i"),
    ('î', "i"),
    ('ï', "i"),
    ('ð', "d"),
    ('ñ', "n"),
    ('ò', "o"),
    ('ó', "o"),
    ('ô', "o"),
    ('õ', "o"),
    ('ö', "o"),
    ('ø', "o"),
    ('ù', "u"),
    ('ú', "u"),
    ('û', "u"),
    ('ü', "u"),
    ('ý', "y"),
    ('þ', "th"),
    ('ß', "ss"),
    ('ÿ', "y"),
    ('ā', "a"),
    ('ă', "a"),
    ('ą', "a"),
    ('ć', "c"),
    ('ĉ', "c"),
    ('ċ', "c"),
    ('č', "c"),
    ('ď', "d"),
    ('đ', "d"),
    ('ē', "e"),
    ('ĕ', "e"),
    ('ė', "e"),
    ('ę', "e"),
    ('ě', "e"),
    ('ĝ', "g"),
    ('ğ', "g"),
    ('ġ', "g"),
    ('ģ', "g"),
    ('ĥ', "h"),
    ('ħ', "h"),
    ('ĩ', "i"),
    ('ī', "i"),
    ('ĭ', "i"),
    ('į', "i"),
    ('ı', "i"),
    ('ĳ', "ij"),
    ('ĵ', "j"),
    ('ķ', "k"),
    ('ĸ', "k"),
    ('ĺ', "l"),
    ('ļ', "l"),
    ('ľ', "l"),
    ('ŀ', "l"),
    ('ł', "l"),
    ('ń', "n"),
    ('ņ', "n"),
    ('ň', "n"),
    ('ŉ', "n"),
    ('ŋ', "n"),
    ('ō', "o"),
    ('ŏ', "o"),
    ('ő', "o"),
    ('œ', "oe"),
    ('ŕ', "r"),
    ('ŗ', "r"),
    ('ř', "r"),
    ('ś', "s"),
    ('ŝ', "s"),
    ('ş', "s"),
    ('š', "s"),
    ('ţ', "t"),
    ('ť', "t"),
    ('ŧ', "t"),
    ('ũ', "u"),
    ('ū', "u"),
    ('ŭ', "u"),
    ('ů', "u"),
    ('ű', "u"),
    ('ų', "u"),
    ('ŵ', "w"),
    ('ŷ', "y"),
    ('ź', "z"),
    ('ż', "z"),
    ('ž', "z"),
    ('ſ', "s"),
];

/// Lower case for the letters the tables know (and the few capitals whose
/// lower case is one of them); other characters are unreadable here, lower
/// case or not. Same results as full Unicode lowercasing, without its
/// tables in every build.
fn lower(c: char) -> char {
    let u = u32::from(c);
    let l = match u {
        0x130 => 0x69, // İ: i and a combining dot, which is dropped
        0x41..=0x5a => u + 0x20,
        0xc0..=0xde if u != 0xd7 => u + 0x20,
        0x100..=0x137 | 0x14a..=0x177 if u % 2 == 0 => u + 1,
        0x139..=0x148 | 0x179..=0x17e if u % 2 == 1 => u + 1,
        0x178 => 0xff,  // Ÿ
        0x1e9e => 0xdf, // ẞ
        0x212a => 0x6b, // Kelvin sign
        0x212b => 0xe5, // Angstrom sign
        0x400..=0x40f => u + 0x50,
        0x410..=0x42f => u + 0x20,
        0x490 => 0x491, // Ґ
        _ => u,
    };
    char::from_u32(l).unwrap_or(c)
}

fn allowed(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_' || c == '-'
}

fn replace_outside_allowed(s: &str, out: &mut String) {
    out.extend(s.chars().map(|c| if allowed(c) { c } else { '_' }));
}

fn lookup(table: &[(char, &'static str)], c: char) -> Option<&'static str> {
    table.iter().find(|(k, _)| *k == c).map(|(_, v)| *v)
}

/// `<server>` for an instance name.
pub fn server_label(instance_name: &str) -> String {
    let mut out = String::with_capacity(instance_name.len());
    if instance_name.is_ascii() {
        replace_outside_allowed(&instance_name.to_ascii_lowercase(), &mut out);
        return out;
    }
    // A run of unreadable characters becomes one `_`, written only when
    // something readable follows (so the label is trimmed at both ends).
    let mut gap = false;
    for c in instance_name.chars().map(lower) {
        let mut ascii = [0u8; 4];
        let piece = if c.is_ascii_alphanumeric() || c == '-' {
            Some(&*c.encode_utf8(&mut ascii))
        } else if let Some(t) = lookup(CYRILLIC, c).or_else(|| lookup(LATIN, c)) {
            Some(t)
        } else {
            gap |= !('\u{300}'..='\u{36f}').contains(&c);
            None
        };
        if let Some(piece) = piece.filter(|p| !p.is_empty()) {
            if gap && !out.is_empty() {
                out.push('_');
            }
            gap = false;
            out.push_str(piece);
        }
    }
    if out.is_empty() {
        out.push_str("server");
    }
    out
}

/// The name a model sees for `tool` on the instance named `instance_name`.
pub fn qualified_tool_name(instance_name: &str, tool: &str) -> String {
    let mut name = String::from("mcp__");
    name.push_str(&server_label(instance_name));
    name.push_str("__");
    replace_outside_allowed(tool, &mut name);
    // Everything above is ASCII, so bytes are characters.
    if name.len() > MAX_TOOL_NAME {
        let digest = Sha256::digest(name.as_bytes());
        name.truncate(MAX_TOOL_NAME - DIGEST_CHARS - 1);
        name.push('_');
        for b in digest.iter().take(DIGEST_CHARS / 2) {
            for nibble in [b >> 4, b & 0x0f] {
                name.push(char::from_digit(u32::from(nibble), 16).unwrap_or('0'));
            }
        }
    }
    name
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn contract_examples() {
        assert_eq!(server_label("My GitHub!"), "my_github_");
        assert_eq!(
            server_label("Constractio — инструменты сметчика"),
            "constractio_instrumenty_smetchika"
        );
        assert_eq!(server_label("工具"), "server");
        assert_eq!(
            qualified_tool_name("My GitHub!", "create issue"),
            "mcp__my_github___create_issue"
        );
    }

    /// The short lowercase agrees with Unicode's on every character whose
    /// lower case the tables read.
    #[test]
    fn lower_matches_unicode_where_it_matters() {
        for c in (0..=0x10ffffu32).filter_map(char::from_u32) {
            let full: alloc::vec::Vec<char> = c.to_lowercase().collect();
            let readable = |x: char| {
                x.is_ascii_alphanumeric()
                    || lookup(CYRILLIC, x).is_some()
                    || lookup(LATIN, x).is_some()
            };
            if (c.is_ascii_alphabetic() || !c.is_ascii()) && full.iter().any(|&x| readable(x)) {
                let mine = lower(c);
                assert!(
                    full.first() == Some(&mine) || (full.len() > 1 && full[0] == mine),
                    "{c:?} ({:x}): {full:?} vs {mine:?}",
                    u32::from(c)
                );
            }
        }
    }

    #[test]
    fn accents_and_decomposed_input() {
        assert_eq!(server_label("Café Ünïcode"), "cafe_unicode");
        assert_eq!(server_label("Cafe\u{301} Ü"), "cafe_u");
        assert_eq!(server_label("__Straße__"), "strasse");
    }

    #[test]
    fn long_names_end_in_a_digest() {
        let n = qualified_tool_name("orders", &"x".repeat(100));
        assert_eq!(n.len(), 64);
        assert!(n.starts_with("mcp__orders__xxxx"));
        assert_eq!(n.as_bytes()[55], b'_');
        assert!(n[56..].bytes().all(|b| b.is_ascii_hexdigit()));
        assert_ne!(n, qualified_tool_name("orders", &"x".repeat(101)));
        let short = qualified_tool_name("orders", &"x".repeat(64 - 13));
        assert_eq!(short.len(), 64);
        assert!(short.ends_with('x'));
    }
}
