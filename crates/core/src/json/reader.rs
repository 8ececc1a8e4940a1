//! The strict reader: one pass over the bytes checks everything RFC 8259
//! and the contract demand (grammar, UTF-8, lone surrogates, duplicate
//! member names after unescaping, depth) and records what it read as a flat
//! list of nodes, a [`Doc`]. The checks read the document in place: strings
//! without escapes, numbers and member names are never copied, and a
//! document costs one vector, not a tree of them.

use alloc::borrow::Cow;
use alloc::string::String;
use alloc::vec::Vec;

use super::{numeric_date, JsonError, JsonText, Value, MAX_DEPTH};
use crate::scan;

/// What a node holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Null,
    Bool,
    Number,
    String,
    Array,
    Object,
}

/// One value (or member name) of a document: its text is
/// `doc.text[start..end]`, strings with their quotes. A container's
/// children follow it: an array's elements, an object's members as name
/// then value. Sixteen bytes: a document is at most 4 GiB (see [`read`]).
#[derive(Debug, Clone, Copy)]
struct Node {
    start: u32,
    end: u32,
    /// Containers: the index after their last descendant. Strings with an
    /// escape: their unescaped text in [`Doc::unescaped`]. Unused otherwise.
    link: u32,
    kind: Kind,
    escaped: bool,
}

impl Node {
    /// Where the value's text is.
    fn span(self) -> core::ops::Range<usize> {
        self.start as usize..self.end as usize
    }

    /// Where a string's text is, without its quotes.
    fn inner(self) -> core::ops::Range<usize> {
        self.start as usize + 1..(self.end as usize).saturating_sub(1)
    }

    fn link(self) -> usize {
        self.link as usize
    }
}

/// Which parts of a document to record; the rest is only checked.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Keep {
    All,
    Nothing,
    /// A JSON-RPC request: top-level `method`, `id` and `params` (of which
    /// `name` and `_meta`), and `method` of batch elements.
    Request,
    /// [`Keep::Request`] and `params.arguments`, for a policy to read.
    #[cfg(feature = "policy")]
    RequestArguments,
    BatchElement,
    Params,
    #[cfg(feature = "policy")]
    ParamsArguments,
}

impl Keep {
    fn member(self, name: &[u8]) -> Keep {
        // Most names are read under `All` or `Nothing`: no name to compare.
        if matches!(self, Keep::All | Keep::Nothing) {
            return self;
        }
        match (self, name) {
            (Keep::Request, b"method" | b"id") | (Keep::BatchElement, b"method") => Keep::All,
            (Keep::Request, b"params") => Keep::Params,
            (Keep::Params, b"name" | b"_meta") => Keep::All,
            #[cfg(feature = "policy")]
            (Keep::RequestArguments, b"method" | b"id")
            | (Keep::ParamsArguments, b"name" | b"_meta" | b"arguments") => Keep::All,
            #[cfg(feature = "policy")]
            (Keep::RequestArguments, b"params") => Keep::ParamsArguments,
            _ => Keep::Nothing,
        }
    }

    fn element(self) -> Keep {
        match self {
            Keep::All => Keep::All,
            Keep::Request => Keep::BatchElement,
            #[cfg(feature = "policy")]
            Keep::RequestArguments => Keep::BatchElement,
            _ => Keep::Nothing,
        }
    }
}

/// A document that passed the strict reader, as recorded under its [`Keep`]
/// (members and elements left out are absent, as if never written).
pub(crate) struct Doc<'a> {
    /// The whole document: every byte outside strings is ASCII and every
    /// string is UTF-8, so a document that was read whole is text.
    text: &'a str,
    nodes: Vec<Node>,
    /// The strings with escapes, unescaped.
    unescaped: Vec<String>,
    /// No whitespace inside the top-level value and no escape anywhere:
    /// every value's text is then its compact form ([`Value::write`]'s).
    compact: bool,
}

/// Reads one JSON document (trailing whitespace only), recording what
/// `keep` asks for. The first offending position decides the error. A
/// document over 4 GiB is refused as [`JsonError::Syntax`]: positions are
/// kept in 32 bits (the body limit is far below).
pub(crate) fn read(src: &[u8], keep: Keep) -> Result<Doc<'_>, JsonError> {
    if u32::try_from(src.len()).is_err() {
        return Err(JsonError::Syntax);
    }
    // Valid UTF-8 throughout (the usual case) is checked once; otherwise
    // each string is checked where it stands, so the first problem in the
    // document is the one reported.
    let text = core::str::from_utf8(src).ok();
    let mut r = Reader {
        src,
        text,
        pos: 0,
        // Sized for a token payload or the kept part of a request.
        nodes: Vec::with_capacity((src.len() / 12).clamp(8, 64)),
        unescaped: Vec::new(),
        names: Vec::with_capacity(32),
        scratch: String::new(),
        spaced: false,
        escaped: false,
    };
    r.ws();
    r.spaced = false;
    r.value(1, keep)?;
    let compact = !r.spaced && !r.escaped;
    r.ws();
    if r.pos != src.len() {
        return Err(JsonError::Syntax);
    }
    Ok(Doc {
        text: text.ok_or(JsonError::Syntax)?,
        nodes: r.nodes,
        unescaped: r.unescaped,
        compact,
    })
}

impl<'a> Doc<'a> {
    /// The top-level value (`None` only when `keep` recorded nothing).
    pub fn root(&self) -> Option<Item<'_, 'a>> {
        Item::at(self, 0)
    }
}

/// A value in a [`Doc`].
#[derive(Clone, Copy)]
pub(crate) struct Item<'d, 'a> {
    doc: &'d Doc<'a>,
    index: usize,
    node: Node,
}

impl<'d, 'a> Item<'d, 'a> {
    fn at(doc: &'d Doc<'a>, index: usize) -> Option<Item<'d, 'a>> {
        let node = *doc.nodes.get(index)?;
        Some(Item { doc, index, node })
    }

    pub fn kind(self) -> Kind {
        self.node.kind
    }

    pub fn is_object(self) -> bool {
        self.node.kind == Kind::Object
    }

    /// The value's JSON text as written, as bytes (no character
    /// boundaries to check).
    fn bytes(self) -> &'a [u8] {
        self.doc
            .text
            .as_bytes()
            .get(self.node.span())
            .unwrap_or_default()
    }

    /// The value's JSON text as written.
    pub fn text(self) -> &'a str {
        self.doc.text.get(self.node.span()).unwrap_or_default()
    }

    /// A string's value, unescaped.
    pub fn as_str(self) -> Option<&'d str> {
        match (self.node.kind, self.node.escaped) {
            (Kind::String, false) => self.doc.text.get(self.node.inner()),
            (Kind::String, true) => self.doc.unescaped.get(self.node.link()).map(String::as_str),
            _ => None,
        }
    }

    /// An array's elements, or an object's member names and values in
    /// turn; nothing for other values.
    fn children(self) -> Children<'d, 'a> {
        let end = match self.node.kind {
            Kind::Array | Kind::Object => self.node.link(),
            _ => 0,
        };
        Children {
            doc: Some(self.doc),
            next: self.index + 1,
            end,
        }
    }

    /// An object's members, in document order, as (name, value).
    pub fn members(self) -> Members<'d, 'a> {
        Members(match self.node.kind {
            Kind::Object => self.children(),
            _ => Children::NONE,
        })
    }

    /// The member `name` of an object; `None` for anything else.
    pub fn get(self, name: &str) -> Option<Item<'d, 'a>> {
        self.member(name.as_bytes())
    }

    /// The member named by the bytes `name` of an object; `None` for
    /// anything else.
    pub fn member(self, name: &[u8]) -> Option<Item<'d, 'a>> {
        let mut found = [None];
        self.get_all(&[name], &mut found);
        found[0]
    }

    /// Fills `found` with the members called `names`, in one pass over
    /// the object.
    pub fn get_all(self, names: &[&[u8]], found: &mut [Option<Item<'d, 'a>>]) {
        self.find_each(|k| position(names, k), found);
    }

    /// Fills `found[slot_of(name)]` with each member whose name has a
    /// slot, in one pass over the object.
    // Walks the nodes themselves, not [`Item::members`]: a payload's
    // claims are found this way, and the walk is half the instructions.
    #[inline(never)]
    pub fn find_each(
        self,
        slot_of: impl Fn(&[u8]) -> Option<usize>,
        found: &mut [Option<Item<'d, 'a>>],
    ) {
        let doc = self.doc;
        let end = match self.node.kind {
            Kind::Object => self.node.link(),
            _ => return,
        };
        let mut at = self.index + 1;
        while at < end {
            let (Some(&name), Some(&value)) = (doc.nodes.get(at), doc.nodes.get(at + 1)) else {
                return;
            };
            let index = at + 1;
            at = match value.kind {
                Kind::Array | Kind::Object => value.link(),
                _ => index + 1,
            };
            let name = match name.escaped {
                false => doc.text.as_bytes().get(name.inner()),
                true => doc.unescaped.get(name.link()).map(String::as_bytes),
            };
            if let Some(slot) = name.and_then(&slot_of).and_then(|i| found.get_mut(i)) {
                *slot = Some(Item {
                    doc,
                    index,
                    node: value,
                });
            }
        }
    }

    /// A string's value, unescaped, as bytes.
    pub fn str_bytes(self) -> Option<&'d [u8]> {
        match (self.node.kind, self.node.escaped) {
            (Kind::String, false) => self.doc.text.as_bytes().get(self.node.inner()),
            _ => self.as_str().map(str::as_bytes),
        }
    }

    /// An array's elements, in order.
    pub fn elements(self) -> Children<'d, 'a> {
        match self.node.kind {
            Kind::Array => self.children(),
            _ => Children::NONE,
        }
    }

    /// A NumericDate (see [`Value::as_numeric_date`]).
    pub fn as_numeric_date(self) -> Option<u64> {
        match self.node.kind {
            Kind::Number => numeric_date(self.text()),
            _ => None,
        }
    }

    /// The value as a [`Value`] tree, borrowing what has no escape.
    pub fn to_value(self) -> Value<'a> {
        let text = |item: Item<'_, 'a>| match item.node.escaped {
            true => Cow::Owned(String::from(item.as_str().unwrap_or_default())),
            false => Cow::Borrowed(item.doc.text.get(item.node.inner()).unwrap_or_default()),
        };
        match self.node.kind {
            Kind::Null => Value::Null,
            Kind::Bool => Value::Bool(self.text() == "true"),
            Kind::Number => Value::Number(Cow::Borrowed(self.text())),
            Kind::String => Value::String(text(self)),
            Kind::Array => {
                let mut items = Vec::new();
                for item in self.elements() {
                    items.push(item.to_value());
                }
                Value::Array(items)
            }
            Kind::Object => {
                let mut members = Vec::new();
                for (k, v) in self.members() {
                    members.push((text(k), v.to_value()));
                }
                Value::Object(members)
            }
        }
    }

    /// The value's compact JSON text ([`Value::write`]'s): a copy of the
    /// text when the document is written compactly, else written anew.
    pub fn to_compact(self) -> String {
        if self.doc.compact {
            return String::from(self.text());
        }
        let mut out = String::new();
        self.to_value().write(&mut out);
        out
    }

    /// JSON equality (as [`Value`]'s): the same text is the same value;
    /// anything else is compared as trees.
    pub fn json_eq(self, other: Item<'_, '_>) -> bool {
        scan::equal(self.bytes(), other.bytes()) || self.to_value() == other.to_value()
    }
}

/// The values that follow one another in a container, each with its
/// descendants skipped.
#[derive(Clone)]
pub(crate) struct Children<'d, 'a> {
    doc: Option<&'d Doc<'a>>,
    next: usize,
    end: usize,
}

impl Children<'_, '_> {
    const NONE: Self = Children {
        doc: None,
        next: 0,
        end: 0,
    };
}

impl<'d, 'a> Iterator for Children<'d, 'a> {
    type Item = Item<'d, 'a>;

    fn next(&mut self) -> Option<Item<'d, 'a>> {
        if self.next >= self.end {
            return None;
        }
        let item = Item::at(self.doc?, self.next)?;
        self.next = match item.node.kind {
            Kind::Array | Kind::Object => item.node.link(),
            _ => self.next + 1,
        };
        Some(item)
    }
}

/// An object's members as (name, value); none when there is no object.
#[derive(Clone)]
pub(crate) struct Members<'d, 'a>(Children<'d, 'a>);

impl<'d, 'a> Members<'d, 'a> {
    pub const NONE: Self = Members(Children::NONE);
}

impl<'d, 'a> Iterator for Members<'d, 'a> {
    type Item = (Item<'d, 'a>, Item<'d, 'a>);

    fn next(&mut self) -> Option<Self::Item> {
        Some((self.0.next()?, self.0.next()?))
    }
}

struct Reader<'a> {
    src: &'a [u8],
    /// `src` as text when it is valid UTF-8 as a whole.
    text: Option<&'a str>,
    pos: usize,
    nodes: Vec<Node>,
    unescaped: Vec<String>,
    /// Member names of the objects being read, innermost last: one buffer
    /// for the duplicate checks of every level.
    names: Vec<Cow<'a, [u8]>>,
    /// The last string with an escape, unescaped.
    scratch: String,
    /// Whether whitespace was skipped, and whether a string had an escape.
    spaced: bool,
    escaped: bool,
}

/// Where `name` stands in `names`.
#[inline(never)]
fn position(names: &[&[u8]], name: &[u8]) -> Option<usize> {
    names.iter().position(|n| same(n, name))
}

/// A fixed list of names found through a 64-slot table keyed on their
/// length and first and last bytes instead of a scan: the token's claims
/// are looked up once for each member of its payload and of `_meta`.
pub(crate) struct NameIndex<const N: usize> {
    names: [&'static [u8]; N],
    /// For each key: 1 + the index of its one name, 0 for none, [`SHARED`]
    /// when several names have it (then they are scanned).
    slots: [u8; 64],
}

const SHARED: u8 = u8::MAX;

/// A name's key in a [`NameIndex`], and its bit in an object's mask of the
/// names read so far ([`Reader::members`]).
const fn slot_key(name: &[u8]) -> usize {
    let ends = match (name.first(), name.last()) {
        (Some(&first), Some(&last)) => first as usize + last as usize,
        _ => 0,
    };
    (name.len().wrapping_mul(2).wrapping_add(ends)) & 63
}

impl<const N: usize> NameIndex<N> {
    pub(crate) const fn new(names: [&'static [u8]; N]) -> Self {
        let slots = {
            let mut slots = [0u8; 64];
            let mut i = 0;
            while i < N {
                // In range: `slot_key` is below 64, `i` below N. Evaluated at
                // compile time.
                #[allow(clippy::indexing_slicing)]
                {
                    let key = slot_key(names[i]);
                    slots[key] = if slots[key] == 0 && i + 1 < SHARED as usize {
                        i as u8 + 1
                    } else {
                        SHARED
                    };
                }
                i += 1;
            }
            slots
        };
        NameIndex { names, slots }
    }

    /// Where `name` stands in the list (the first place, as [`position`]).
    pub(crate) fn position(&self, name: &[u8]) -> Option<usize> {
        // The table answers unless several names share the key.
        match self.slots.get(slot_key(name)).copied()? {
            0 => return None,
            SHARED => {}
            slot => {
                let i = usize::from(slot - 1);
                return self.names.get(i).filter(|n| same(n, name)).map(|_| i);
            }
        }
        position(&self.names, name)
    }

    /// Fills `found` with the members of `object` the list names, in one
    /// pass over it.
    pub(crate) fn get_all<'d, 'a>(&self, object: Item<'d, 'a>, found: &mut [Option<Item<'d, 'a>>]) {
        object.find_each(|k| self.position(k), found);
    }

    /// Whether no two names share a slot (every lookup is then one compare).
    #[cfg(test)]
    pub(crate) fn direct(&self) -> bool {
        !self.slots.contains(&SHARED)
    }
}

/// Equal names; the last byte first, since names of one object often
/// share a length and a prefix (`agentarea/...`).
pub(crate) fn same(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.last() == b.last() && scan::equal(a, b)
}

/// Objects with more members than this check duplicates by sorting.
const LINEAR_DUPLICATE_SCAN: usize = 16;

impl<'a> Reader<'a> {
    fn peek(&self) -> Option<u8> {
        self.src.get(self.pos).copied()
    }

    fn ws(&mut self) {
        // Most calls find a byte above the space: one compare.
        if self.peek() > Some(b' ') {
            return;
        }
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.peek() {
            self.pos += 1;
            self.spaced = true;
        }
    }

    fn eat(&mut self, b: u8) -> Result<(), JsonError> {
        if self.peek() == Some(b) {
            self.pos += 1;
            Ok(())
        } else {
            Err(JsonError::Syntax)
        }
    }

    /// Records a value that ends here; returns its index.
    // Positions and counts fit 32 bits: `read` refuses longer documents,
    // and every node or unescaped string takes at least one byte.
    // Natively inlined: it runs for every value kept, and its rare case is
    // a call apart.
    #[cfg_attr(not(target_arch = "wasm32"), inline(always))]
    fn push(&mut self, start: usize, kind: Kind, escaped: bool) -> usize {
        let index = self.nodes.len();
        let link = match escaped {
            true => self.keep_unescaped(),
            false => index + 1,
        };
        self.nodes.push(Node {
            start: start as u32,
            end: self.pos as u32,
            link: link as u32,
            kind,
            escaped,
        });
        index
    }

    /// Keeps the string just read, unescaped; its index in `unescaped`
    /// (inlined in the size-bound wasm builds).
    #[cfg_attr(not(target_arch = "wasm32"), cold, inline(never))]
    #[cfg_attr(target_arch = "wasm32", inline(always))]
    fn keep_unescaped(&mut self) -> usize {
        self.unescaped.push(self.scratch.clone());
        self.unescaped.len() - 1
    }

    /// Ends the container recorded at `index` here.
    fn close(&mut self, index: Option<usize>) {
        let (end, link) = (self.pos as u32, self.nodes.len() as u32);
        if let Some(node) = index.and_then(|i| self.nodes.get_mut(i)) {
            node.end = end;
            node.link = link;
        }
    }

    // Natively inlined into the member and element loops: a scalar value
    // then costs no call (containers still recurse through a call).
    #[cfg_attr(not(target_arch = "wasm32"), inline(always))]
    fn value(&mut self, depth: usize, keep: Keep) -> Result<(), JsonError> {
        let start = self.pos;
        let (kind, escaped) = match self.peek() {
            Some(b'{') => return self.object(depth, keep),
            Some(b'[') => return self.array(depth, keep),
            Some(b'"') => (Kind::String, self.string()?),
            Some(b't') => (self.literal(b"true", Kind::Bool)?, false),
            Some(b'f') => (self.literal(b"false", Kind::Bool)?, false),
            Some(b'n') => (self.literal(b"null", Kind::Null)?, false),
            Some(b'-' | b'0'..=b'9') => (self.number()?, false),
            _ => return Err(JsonError::Syntax),
        };
        if keep != Keep::Nothing {
            self.push(start, kind, escaped);
        }
        Ok(())
    }

    fn literal(&mut self, word: &[u8], kind: Kind) -> Result<Kind, JsonError> {
        // Compare byte by byte so a truncated literal fails at its end.
        for &b in word {
            self.eat(b)?;
        }
        Ok(kind)
    }

    fn digits(&mut self) -> usize {
        let start = self.pos;
        while let Some(b'0'..=b'9') = self.peek() {
            self.pos += 1;
        }
        self.pos - start
    }

    fn number(&mut self) -> Result<Kind, JsonError> {
        if self.peek() == Some(b'-') {
            self.pos += 1;
        }
        match self.peek() {
            Some(b'0') => self.pos += 1,
            Some(b'1'..=b'9') => {
                self.digits();
            }
            _ => return Err(JsonError::Syntax),
        }
        if self.peek() == Some(b'.') {
            self.pos += 1;
            if self.digits() == 0 {
                return Err(JsonError::Syntax);
            }
        }
        if let Some(b'e' | b'E') = self.peek() {
            self.pos += 1;
            if let Some(b'+' | b'-') = self.peek() {
                self.pos += 1;
            }
            if self.digits() == 0 {
                return Err(JsonError::Syntax);
            }
        }
        Ok(Kind::Number)
    }

    /// The string bytes from `from` to here; runs end at ASCII bytes, so
    /// they never split a UTF-8 sequence.
    fn run(&self, from: usize) -> Result<&'a str, JsonError> {
        match self.text {
            Some(text) => text.get(from..self.pos).ok_or(JsonError::Syntax),
            None => core::str::from_utf8(self.src.get(from..self.pos).unwrap_or_default())
                .map_err(|_| JsonError::Syntax),
        }
    }

    /// Advances over string bytes that need no attention.
    fn plain(&mut self) {
        self.pos += scan::plain_len(self.src.get(self.pos..).unwrap_or_default());
    }

    /// Reads the string whose opening quote is here; whether it has an
    /// escape. If it has, its unescaped text is left in `scratch`.
    // Natively inlined: the usual string (one run in a document checked
    // whole) is a few instructions; the rest is a call apart.
    #[cfg_attr(not(target_arch = "wasm32"), inline(always))]
    fn string(&mut self) -> Result<bool, JsonError> {
        let start = self.pos + 1;
        self.pos = start;
        self.plain();
        if self.peek() == Some(b'"') && self.text.is_some() {
            self.pos += 1;
            return Ok(false);
        }
        self.string_rest(start)
    }

    /// [`Reader::string`] past its first run, which started at `start`
    /// (one function with it in the size-bound wasm builds).
    #[cfg_attr(not(target_arch = "wasm32"), inline(never))]
    #[cfg_attr(target_arch = "wasm32", inline(always))]
    fn string_rest(&mut self, start: usize) -> Result<bool, JsonError> {
        if self.peek() == Some(b'"') {
            // One run in a document not checked whole: checked here.
            self.run(start)?;
            self.pos += 1;
            return Ok(false);
        }
        self.escaped = true;
        self.scratch.clear();
        let run = self.run(start)?;
        self.scratch.push_str(run);
        loop {
            match self.peek() {
                Some(b'"') => {
                    self.pos += 1;
                    return Ok(true);
                }
                Some(b'\\') => {
                    self.pos += 1;
                    let c = self.escape()?;
                    self.scratch.push(c);
                }
                Some(0x20..) => {
                    let from = self.pos;
                    self.plain();
                    let run = self.run(from)?;
                    self.scratch.push_str(run);
                }
                _ => return Err(JsonError::Syntax),
            }
        }
    }

    fn hex4(&mut self) -> Result<u32, JsonError> {
        let mut v = 0u32;
        for _ in 0..4 {
            let d = match self.peek() {
                Some(b @ b'0'..=b'9') => b - b'0',
                Some(b @ b'a'..=b'f') => b - b'a' + 10,
                Some(b @ b'A'..=b'F') => b - b'A' + 10,
                _ => return Err(JsonError::Syntax),
            };
            v = (v << 4) | u32::from(d);
            self.pos += 1;
        }
        Ok(v)
    }

    /// The character an escape (after its backslash) stands for.
    fn escape(&mut self) -> Result<char, JsonError> {
        let c = match self.peek() {
            Some(b'"') => '"',
            Some(b'\\') => '\\',
            Some(b'/') => '/',
            Some(b'b') => '\u{8}',
            Some(b'f') => '\u{c}',
            Some(b'n') => '\n',
            Some(b'r') => '\r',
            Some(b't') => '\t',
            Some(b'u') => {
                self.pos += 1;
                let hi = self.hex4()?;
                let code = match hi {
                    0xD800..=0xDBFF => {
                        self.eat(b'\\')?;
                        self.eat(b'u')?;
                        let lo = self.hex4()?;
                        if !(0xDC00..=0xDFFF).contains(&lo) {
                            return Err(JsonError::Syntax);
                        }
                        0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00)
                    }
                    0xDC00..=0xDFFF => return Err(JsonError::Syntax),
                    _ => hi,
                };
                return char::from_u32(code).ok_or(JsonError::Syntax);
            }
            _ => return Err(JsonError::Syntax),
        };
        self.pos += 1;
        Ok(c)
    }

    /// Records the container opening here when `keep` asks for it.
    fn open(&mut self, kind: Kind, keep: Keep) -> Option<usize> {
        let start = self.pos;
        self.pos += 1;
        (keep != Keep::Nothing).then(|| self.push(start, kind, false))
    }

    fn array(&mut self, depth: usize, keep: Keep) -> Result<(), JsonError> {
        if depth > MAX_DEPTH {
            return Err(JsonError::TooDeep);
        }
        let index = self.open(Kind::Array, keep);
        if self.closes(b']', index) {
            return Ok(());
        }
        let child = keep.element();
        loop {
            self.ws();
            self.value(depth + 1, child)?;
            if self.ends(b']', index)? {
                return Ok(());
            }
        }
    }

    /// Past whitespace, whether `end` is here, closing the container
    /// recorded at `index`.
    fn closes(&mut self, end: u8, index: Option<usize>) -> bool {
        self.ws();
        if self.peek() != Some(end) {
            return false;
        }
        self.pos += 1;
        self.close(index);
        true
    }

    /// After an element or a member: a comma (`false`, another follows)
    /// or `end` (`true`, the container is closed).
    fn ends(&mut self, end: u8, index: Option<usize>) -> Result<bool, JsonError> {
        if self.closes(end, index) {
            return Ok(true);
        }
        self.eat(b',').map(|()| false)
    }

    /// Reads a member name; unescaped, borrowed when it has no escape.
    fn name(&mut self) -> Result<(Cow<'a, [u8]>, bool), JsonError> {
        let start = self.pos + 1;
        if self.string()? {
            return Ok((Cow::Owned(self.scratch.as_bytes().to_vec()), true));
        }
        let name = self.src.get(start..self.pos - 1).unwrap_or_default();
        Ok((Cow::Borrowed(name), false))
    }

    fn object(&mut self, depth: usize, keep: Keep) -> Result<(), JsonError> {
        if depth > MAX_DEPTH {
            return Err(JsonError::TooDeep);
        }
        let index = self.open(Kind::Object, keep);
        if self.closes(b'}', index) {
            return Ok(());
        }
        let base = self.names.len();
        let read = self.members(depth, keep, index, base);
        // A large object's names are checked once, when it ends or fails
        // (sorted: a linear scan would be quadratic). A name read twice
        // comes before whatever failed after it, so it is the error.
        let names = self.names.get_mut(base..).unwrap_or_default();
        let read = if names.len() > LINEAR_DUPLICATE_SCAN && has_duplicate(names) {
            Err(JsonError::Duplicate)
        } else {
            read
        };
        self.names.truncate(base);
        read
    }

    /// An object's members up to its `}`, their names pushed on `names`
    /// from `base`; the first `LINEAR_DUPLICATE_SCAN + 1` are checked for
    /// duplicates as they come, the rest by [`Reader::object`].
    fn members(
        &mut self,
        depth: usize,
        keep: Keep,
        index: Option<usize>,
        base: usize,
    ) -> Result<(), JsonError> {
        // The keys of the names read so far, one bit each.
        let mut keys = 0u64;
        loop {
            self.ws();
            if self.peek() != Some(b'"') {
                return Err(JsonError::Syntax);
            }
            let name_start = self.pos;
            let (name, escaped) = self.name()?;
            // Only a name whose key an earlier name has can repeat one:
            // the scan is skipped for most names.
            let bit = 1u64 << slot_key(&name);
            if keys & bit != 0 {
                let held = self.names.get(base..).unwrap_or(&[]);
                if held.len() <= LINEAR_DUPLICATE_SCAN && held.iter().any(|n| same(n, &name)) {
                    return Err(JsonError::Duplicate);
                }
            }
            keys |= bit;
            let child = keep.member(&name);
            self.names.push(name);
            if child != Keep::Nothing {
                self.push(name_start, Kind::String, escaped);
            }
            self.ws();
            self.eat(b':')?;
            self.ws();
            self.value(depth + 1, child)?;
            if self.ends(b'}', index)? {
                return Ok(());
            }
        }
    }
}

/// Whether `names` holds a name twice; sorts them.
fn has_duplicate(names: &mut [Cow<'_, [u8]>]) -> bool {
    crate::sort::heapsort(names, |a, b| a < b);
    names.windows(2).any(|w| matches!(w, [a, b] if a == b))
}

/// Reads one JSON document; trailing whitespace only. Documents of more
/// than 4 GiB are refused ([`JsonError::Syntax`]).
pub fn parse(src: &[u8]) -> Result<Value<'_>, JsonError> {
    let doc = read(src, Keep::All)?;
    doc.root().map(Item::to_value).ok_or(JsonError::Syntax)
}

impl JsonText {
    /// The value as a tree.
    pub fn parse(&self) -> Result<Value<'_>, JsonError> {
        parse(self.as_str().as_bytes())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn root<'d, 'a>(doc: &'d Doc<'a>) -> Item<'d, 'a> {
        doc.root().unwrap()
    }

    #[test]
    fn a_name_index_finds_what_a_scan_finds() {
        // Names sharing a key (`ab` and `ba`), one twice, the empty and a
        // one-byte name, and misses of every kind.
        const NAMES: [&[u8]; 7] = [b"iss", b"ab", b"ba", b"", b"b", b"iss", b"tool_call_id"];
        let index = NameIndex::new(NAMES);
        assert!(!index.direct());
        for name in [
            &b"iss"[..],
            b"ab",
            b"ba",
            b"",
            b"b",
            b"tool_call_id",
            b"isx",
            b"a",
            b"aa",
            b"tool_call_ix",
            b"workspace_id",
        ] {
            assert_eq!(index.position(name), position(&NAMES, name), "{name:?}");
        }
    }

    #[test]
    fn duplicates_are_found_whatever_keys_the_names_share() {
        // `ab` and `ba` share a key, `a` and `ab` do not.
        assert_eq!(slot_key(b"ab"), slot_key(b"ba"));
        assert!(read(br#"{"ab":1,"ba":2,"a":3}"#, Keep::All).is_ok());
        for dup in [
            &br#"{"ab":1,"ba":2,"ab":3}"#[..],
            br#"{"a":1,"ab":2,"a":3}"#,
            br#"{"x":{"a":1},"a":{"a":2,"\u0061":3}}"#,
        ] {
            assert_eq!(read(dup, Keep::All).err(), Some(JsonError::Duplicate));
        }
        // A name in an inner object is not a duplicate of an outer one.
        assert!(read(br#"{"a":{"a":{"a":1}},"b":2}"#, Keep::Nothing).is_ok());
    }

    #[test]
    fn members_skip_nested_values_and_get_all_finds_by_name() {
        let doc = read(
            br#"{"a":{"x":[1,{"y":2}]},"b":[[],{}],"c":"\u0041","d":true}"#,
            Keep::All,
        )
        .unwrap();
        let names: Vec<_> = root(&doc)
            .members()
            .map(|(k, _)| k.as_str().unwrap())
            .collect();
        assert_eq!(names, ["a", "b", "c", "d"]);
        let mut found = [None; 3];
        root(&doc).get_all(&[b"d", b"c", b"zz"], &mut found);
        assert_eq!(found[0].map(Item::text), Some("true"));
        assert_eq!(found[1].and_then(Item::as_str), Some("A"));
        assert!(found[2].is_none());
        let b = root(&doc).get("b").unwrap();
        assert_eq!(
            b.elements().map(Item::text).collect::<Vec<_>>(),
            ["[]", "{}"]
        );
        assert_eq!(
            root(&doc).get("a").unwrap().get("x").unwrap().text(),
            r#"[1,{"y":2}]"#
        );
    }

    #[test]
    fn a_request_keeps_only_what_the_checks_read() {
        let src = br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","arguments":{"a":[1,2]},"_meta":{"k":{"v":1}}}}"#;
        let doc = read(src, Keep::Request).unwrap();
        let names: Vec<_> = root(&doc)
            .members()
            .map(|(k, _)| k.as_str().unwrap())
            .collect();
        assert_eq!(names, ["id", "method", "params"]);
        let params = root(&doc).get("params").unwrap();
        let names: Vec<_> = params.members().map(|(k, _)| k.as_str().unwrap()).collect();
        assert_eq!(names, ["name", "_meta"]);
        assert_eq!(params.get("_meta").unwrap().text(), r#"{"k":{"v":1}}"#);
        // What is dropped is still checked.
        let dup = br#"{"method":"tools/call","params":{"arguments":{"a":1,"a":2}}}"#;
        assert_eq!(read(dup, Keep::Request).err(), Some(JsonError::Duplicate));
    }

    #[test]
    fn compact_text_is_the_writers() {
        let compact = |src: &[u8]| {
            let doc = read(src, Keep::All).unwrap();
            let item = root(&doc);
            let mut written = String::new();
            item.to_value().write(&mut written);
            assert_eq!(item.to_compact(), written);
            (doc.compact, written)
        };
        let (fast, text) = compact(br#" {"a":[1,"x y",{}],"b":{"c":null}} "#);
        assert!(fast);
        assert_eq!(text, r#"{"a":[1,"x y",{}],"b":{"c":null}}"#);
        assert_eq!(
            compact(br#"{ "a" : [1, 2] }"#),
            (false, String::from(r#"{"a":[1,2]}"#))
        );
        assert_eq!(
            compact(br#"{"a":"\u0041\/"}"#),
            (false, String::from(r#"{"a":"A/"}"#))
        );
    }

    #[test]
    fn equal_values_written_apart() {
        let a = read(br#"{"x":[1,2.0],"y":"\u00e9"}"#, Keep::All).unwrap();
        let b = read("{\"y\":\"é\",\"x\":[1.0,2]}".as_bytes(), Keep::All).unwrap();
        let c = read(br#"{"x":[2,1],"y":"\u00e9"}"#, Keep::All).unwrap();
        assert!(root(&a).json_eq(root(&b)));
        assert!(!root(&a).json_eq(root(&c)));
    }
}
