//! The walk over a stream's items: an explicit stack of what is still to be read, so deep
//! input costs heap memory in proportion to its bytes (and at most `max_depth` levels), never
//! the call stack.

use crate::error::{Error, Refused};
use crate::format::sexp::*;
use crate::format::special::*;
use crate::format::{
    ACTIVE_BINDING, BASE_ALTREP_CLASSES, HAS_ATTR, HAS_TAG, IS_OBJECT, LEVELS_SHIFT, LONG_LENGTH_UPPER_MAX, NA_INTEGER,
    SORTEDNESS, XLEN_MAX,
};
use crate::input::Input;
use crate::{Policy, Summary};
use std::io::BufRead;

/// What an item's position lets it be. R's reader stores whatever it reads where it reads
/// it; code elsewhere in R then trusts, say, that attributes are a pairlist and that a
/// string vector holds strings. A stream that breaks those assumptions is refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Slot {
    /// Any value.
    Value,
    /// Attributes: a pairlist or NULL.
    Attributes,
    /// The rest of a pairlist: a pairlist cell or NULL.
    Cdr,
    /// A pairlist cell's tag: a symbol.
    Tag,
    /// An element of a character vector: a `CHARSXP`.
    Chars,
    /// The state of a compact sequence: three numbers (length, first, step).
    SeqState { integer: bool },
    /// The state of a deferred string conversion: a cell (numbers, scipen).
    DeferredState,
    /// The numbers a deferred string converts: integers or reals (or a compact sequence).
    DeferredArg,
    /// The scipen of a deferred string conversion: an integer vector.
    DeferredInfo,
    /// The state of a wrapper: a cell (wrapped vector, metadata).
    WrapState,
    /// The vector a wrapper wraps.
    Wrapped,
    /// A wrapper's metadata: two integers (sortedness, no NA).
    WrapMeta,
}

impl Slot {
    fn expects(self) -> &'static str {
        match self {
            Slot::Value => "a value",
            Slot::Attributes => "attributes (a pairlist)",
            Slot::Cdr => "the rest of a pairlist",
            Slot::Tag => "a tag (a symbol)",
            Slot::Chars => "an element of a character vector",
            Slot::SeqState { .. } => "the state of a compact sequence",
            Slot::DeferredState => "the state of a deferred string",
            Slot::DeferredArg => "the numbers of a deferred string",
            Slot::DeferredInfo => "the options of a deferred string",
            Slot::WrapState => "the state of a wrapper",
            Slot::Wrapped => "the vector of a wrapper",
            Slot::WrapMeta => "the metadata of a wrapper",
        }
    }
}

#[derive(Debug, Clone, Copy)]
enum Task {
    Item(Slot, u32),
    /// `left` items more of a vector, each in `slot`.
    Elements {
        slot: Slot,
        left: u64,
        depth: u32,
    },
}

/// An entry of the reference table (what a `REFSXP` may point at).
#[derive(Debug, Clone, Copy)]
enum Ref {
    /// A symbol; its name is `names[start..start + len]`, or unknown (too long to keep).
    Symbol {
        start: usize,
        len: Option<u8>,
    },
    Other,
}

/// The longest symbol name kept for the ALTREP class check (longer ones match nothing).
const NAME_KEEP: usize = 64;

pub(crate) struct Walker<'p, R> {
    input: Input<R>,
    policy: &'p Policy,
    stack: Vec<Task>,
    refs: Vec<Ref>,
    names: Vec<u8>,
    items: u64,
}

/// An item's flags word.
struct Flags {
    kind: u8,
    raw: u32,
    at: u64,
}

impl Flags {
    fn has_attr(&self) -> bool {
        self.raw & HAS_ATTR != 0
    }
    fn has_tag(&self) -> bool {
        self.raw & HAS_TAG != 0
    }
    fn levels(&self) -> u32 {
        self.raw >> LEVELS_SHIFT
    }
    /// Plain: no attributes, no tag, not an object (what R writes for the internal pieces
    /// of ALTREP objects).
    fn plain(&self) -> bool {
        self.raw & (HAS_ATTR | HAS_TAG | IS_OBJECT) == 0
    }
}

impl<'p, R: BufRead> Walker<'p, R> {
    pub fn new(input: R, policy: &'p Policy) -> Self {
        Walker {
            input: Input::new(input),
            policy,
            stack: Vec::new(),
            refs: Vec::new(),
            names: Vec::new(),
            items: 0,
        }
    }

    pub fn run(mut self) -> Result<Summary, Error> {
        let header = self.input.header()?;
        self.stack.push(Task::Item(Slot::Value, 1));
        while let Some(task) = self.stack.pop() {
            match task {
                Task::Item(slot, depth) => self.item(slot, depth)?,
                Task::Elements { slot, left, depth } => {
                    if left > 1 {
                        self.stack.push(Task::Elements {
                            slot,
                            left: left - 1,
                            depth,
                        });
                    }
                    self.item(slot, depth)?;
                }
            }
        }
        Ok(Summary {
            format: header.format,
            version: header.version,
            native_encoding: header.native_encoding,
            items: self.items,
            bytes: self.input.offset(),
        })
    }

    fn flags(&mut self) -> Result<Flags, Error> {
        let at = self.input.offset();
        let raw = self.input.int()? as u32;
        self.items += 1;
        Ok(Flags {
            kind: (raw & 0xff) as u8,
            raw,
            at,
        })
    }

    fn refuse(what: Refused, at: u64) -> Error {
        Error::Refused { what, offset: at }
    }

    fn misplaced(found: &str, slot: Slot, at: u64) -> Error {
        Error::malformed(format!("{found} where R expects {}", slot.expects()), at)
    }

    /// A vector length (R's `ReadLENGTH`).
    fn length(&mut self) -> Result<u64, Error> {
        let at = self.input.offset();
        let n = self.input.int()?;
        match n {
            -1 => {
                let upper = self.input.int()? as u32;
                let lower = self.input.int()? as u32;
                if upper > LONG_LENGTH_UPPER_MAX {
                    return Err(Error::malformed("a long vector length beyond R's", at));
                }
                let n = (u64::from(upper) << 32) + u64::from(lower);
                if n > XLEN_MAX {
                    return Err(Error::malformed("a long vector length beyond R's", at));
                }
                Ok(n)
            }
            n if n < -1 => Err(Error::malformed(format!("a vector length of {n}"), at)),
            n => Ok(n as u64),
        }
    }

    fn push(&mut self, slot: Slot, depth: u32) {
        self.stack.push(Task::Item(slot, depth));
    }

    fn push_elements(&mut self, slot: Slot, n: u64, depth: u32) {
        if n > 0 {
            self.stack.push(Task::Elements { slot, left: n, depth });
        }
    }

    /// A symbol's name (the `CHARSXP` after `SYMSXP`), entered in the reference table.
    fn symbol(&mut self) -> Result<Ref, Error> {
        let f = self.flags()?;
        if f.kind != CHARSXP || f.has_attr() {
            return Err(Error::malformed("a symbol whose name is not a string", f.at));
        }
        let at = self.input.offset();
        let n = self.input.int()?;
        let start = self.names.len();
        let entry = match n {
            -1 => {
                // installTrChar(NA_STRING): the symbol `NA`.
                self.names.extend_from_slice(b"NA");
                Ref::Symbol { start, len: Some(2) }
            }
            n if n < -1 => return Err(Error::malformed(format!("a string length of {n}"), at)),
            n => {
                let n = n as usize;
                self.input.string(n, Some(&mut self.names), NAME_KEEP)?;
                if n <= NAME_KEEP {
                    Ref::Symbol {
                        start,
                        len: Some(n as u8),
                    }
                } else {
                    self.names.truncate(start);
                    Ref::Symbol { start, len: None }
                }
            }
        };
        self.refs.push(entry);
        Ok(entry)
    }

    /// A reference (`REFSXP`), looked up.
    fn reference(&mut self, f: &Flags) -> Result<Ref, Error> {
        let mut index = i64::from(f.raw >> 8);
        if index == 0 {
            index = i64::from(self.input.int()?);
        }
        usize::try_from(index - 1)
            .ok()
            .and_then(|i| self.refs.get(i).copied())
            .ok_or_else(|| Error::malformed(format!("reference {index} to an item not read yet"), f.at))
    }

    fn name(&self, entry: Ref) -> Option<&[u8]> {
        match entry {
            Ref::Symbol { start, len: Some(len) } => self.names.get(start..start + usize::from(len)),
            _ => None,
        }
    }

    /// A symbol where the ALTREP class information has one: a new symbol or a reference to
    /// one; its name.
    fn info_symbol(&mut self) -> Result<Option<Vec<u8>>, Error> {
        let f = self.flags()?;
        let entry = match f.kind {
            SYMSXP => self.symbol()?,
            REFSXP => self.reference(&f)?,
            _ => return Err(Error::malformed("ALTREP class information without a class name", f.at)),
        };
        match entry {
            Ref::Symbol { .. } => Ok(self.name(entry).map(<[u8]>::to_vec)),
            Ref::Other => Err(Error::malformed("ALTREP class information without a class name", f.at)),
        }
    }

    /// A pairlist cell header where R writes a plain one.
    fn plain_cell(&mut self, what: &str) -> Result<(), Error> {
        let f = self.flags()?;
        if f.kind != LISTSXP || !f.plain() {
            return Err(Error::malformed(format!("{what} of a shape R does not write"), f.at));
        }
        Ok(())
    }

    /// The class information of an ALTREP object (a pairlist: class symbol, package symbol,
    /// type), read whole; the class name.
    fn altrep_class(&mut self, at: u64) -> Result<String, Error> {
        self.plain_cell("ALTREP class information")?;
        let class = self.info_symbol()?;
        self.plain_cell("ALTREP class information")?;
        let package = self.info_symbol()?;
        self.plain_cell("ALTREP class information")?;
        let f = self.flags()?;
        if f.kind != INTSXP || !f.plain() || self.length()? != 1 {
            return Err(Error::malformed(
                "ALTREP class information of a shape R does not write",
                f.at,
            ));
        }
        self.input.int()?;
        let f = self.flags()?;
        if f.kind != NILVALUE_SXP {
            return Err(Error::malformed(
                "ALTREP class information of a shape R does not write",
                f.at,
            ));
        }
        let text = |name: &Option<Vec<u8>>| match name {
            Some(n) => String::from_utf8_lossy(n).into_owned(),
            None => "(a long name)".to_string(),
        };
        let (class, package) = (text(&class), text(&package));
        if package != "base" || !BASE_ALTREP_CLASSES.contains(&class.as_str()) {
            return Err(Self::refuse(Refused::ForeignAltrep { class, package }, at));
        }
        Ok(class)
    }

    /// The three numbers of a compact sequence's state, checked as R's constructor would
    /// need them (R reads them unchecked, so a state of the wrong type or length reads
    /// memory that is not there).
    fn sequence_state(&mut self, f: &Flags, integer: bool) -> Result<(), Error> {
        let shape = Error::malformed("a compact sequence state of a shape R does not write", f.at);
        if !(f.kind == REALSXP || (integer && f.kind == INTSXP)) || f.has_attr() {
            return Err(shape);
        }
        if self.length()? != 3 {
            return Err(shape);
        }
        let mut v = [0f64; 3];
        for x in &mut v {
            *x = if f.kind == INTSXP {
                match self.input.int()? {
                    NA_INTEGER => f64::NAN,
                    i => f64::from(i),
                }
            } else {
                self.input.real()?
            };
        }
        let [n, first, step] = v;
        let whole = |x: f64| x.is_finite() && x.fract() == 0.0;
        let int_range = |x: f64| whole(x) && x.abs() <= f64::from(i32::MAX);
        let ok = whole(n)
            && n >= 0.0
            && (step == 1.0 || step == -1.0)
            && if integer {
                n <= f64::from(i32::MAX) && int_range(first) && (n == 0.0 || int_range(first + step * (n - 1.0)))
            } else {
                n <= XLEN_MAX as f64 && first.is_finite()
            };
        if ok {
            Ok(())
        } else {
            Err(Error::malformed(
                format!("a compact sequence of length {n} from {first} by {step}, which R cannot hold"),
                f.at,
            ))
        }
    }

    fn item(&mut self, slot: Slot, depth: u32) -> Result<(), Error> {
        let at = self.input.offset();
        if depth > self.policy.max_depth {
            return Err(Error::TooDeep {
                limit: self.policy.max_depth,
                offset: at,
            });
        }
        let f = self.flags()?;
        let child = depth + 1;
        let is = |slots: &[Slot]| slots.contains(&slot);
        match f.kind {
            // Code, and what loads or runs code, first: the message names it wherever it is.
            PROMSXP => Err(Self::refuse(Refused::Promise, at)),
            CLOSXP => Err(Self::refuse(Refused::Closure, at)),
            BCODESXP | BCREPDEF | BCREPREF | ATTRLANGSXP | ATTRLISTSXP => Err(Self::refuse(Refused::Bytecode, at)),
            SPECIALSXP | BUILTINSXP => Err(Self::refuse(Refused::Builtin, at)),
            DOTSXP => Err(Self::refuse(Refused::DotArguments, at)),
            NAMESPACESXP => Err(Self::refuse(Refused::Namespace, at)),
            PACKAGESXP => Err(Self::refuse(Refused::PackageEnvironment, at)),
            PERSISTSXP => Err(Self::refuse(Refused::PersistentReference, at)),
            UNBOUNDVALUE_SXP => Err(Self::refuse(Refused::UnboundMarker, at)),
            ENVSXP if !self.policy.environments => Err(Self::refuse(Refused::Environment, at)),
            EXTPTRSXP if !self.policy.external_pointers => Err(Self::refuse(Refused::ExternalPointer, at)),
            WEAKREFSXP if !self.policy.external_pointers => Err(Self::refuse(Refused::WeakReference, at)),
            CLASSREFSXP | GENERICREFSXP => Err(Error::malformed("a class reference, which R cannot read", at)),

            NILVALUE_SXP if is(&[Slot::Value, Slot::Attributes, Slot::Cdr]) => Ok(()),
            NILVALUE_SXP => Err(Self::misplaced("NULL", slot, at)),
            // References to the reader's own environments: nothing is built from the file.
            GLOBALENV_SXP | BASEENV_SXP | EMPTYENV_SXP | BASENAMESPACE_SXP | MISSINGARG_SXP if slot == Slot::Value => {
                Ok(())
            }
            GLOBALENV_SXP | BASEENV_SXP | EMPTYENV_SXP | BASENAMESPACE_SXP | MISSINGARG_SXP => {
                Err(Self::misplaced("an environment or the missing argument", slot, at))
            }
            REFSXP => match (self.reference(&f)?, slot) {
                (Ref::Symbol { .. }, Slot::Value | Slot::Tag) | (Ref::Other, Slot::Value) => Ok(()),
                _ => Err(Self::misplaced("a reference", slot, at)),
            },
            SYMSXP if is(&[Slot::Value, Slot::Tag]) => self.symbol().map(drop),
            SYMSXP => Err(Self::misplaced("a symbol", slot, at)),

            LISTSXP | LANGSXP => {
                let allowed = if f.kind == LISTSXP {
                    is(&[
                        Slot::Value,
                        Slot::Attributes,
                        Slot::Cdr,
                        Slot::DeferredState,
                        Slot::WrapState,
                    ])
                } else {
                    slot == Slot::Value
                };
                if !allowed {
                    return Err(Self::misplaced("a pairlist or call", slot, at));
                }
                if f.levels() & ACTIVE_BINDING != 0 {
                    return Err(Self::refuse(Refused::ActiveBinding, at));
                }
                let (car, cdr) = match slot {
                    Slot::DeferredState => (Slot::DeferredArg, Slot::DeferredInfo),
                    Slot::WrapState => (Slot::Wrapped, Slot::WrapMeta),
                    _ => (Slot::Value, Slot::Cdr),
                };
                if car != Slot::Value && !f.plain() {
                    return Err(Error::malformed("an ALTREP state of a shape R does not write", at));
                }
                // Read in order: attributes, tag, car, cdr.
                self.push(cdr, child);
                self.push(car, child);
                if f.has_tag() {
                    self.push(Slot::Tag, child);
                }
                if f.has_attr() {
                    self.push(Slot::Attributes, child);
                }
                Ok(())
            }
            ENVSXP => {
                if slot != Slot::Value {
                    return Err(Self::misplaced("an environment", slot, at));
                }
                self.input.int()?; // locked
                self.refs.push(Ref::Other);
                // Enclosure, frame, hash table, attributes (always present).
                self.push(Slot::Attributes, child);
                self.push(Slot::Value, child);
                self.push(Slot::Cdr, child);
                self.push(Slot::Value, child);
                Ok(())
            }
            EXTPTRSXP | WEAKREFSXP => {
                if slot != Slot::Value {
                    return Err(Self::misplaced("an external pointer", slot, at));
                }
                self.refs.push(Ref::Other);
                if f.has_attr() {
                    self.push(Slot::Attributes, child);
                }
                if f.kind == EXTPTRSXP {
                    // Protected value, then tag.
                    self.push(Slot::Value, child);
                    self.push(Slot::Value, child);
                }
                Ok(())
            }
            CHARSXP => {
                if slot != Slot::Chars {
                    return Err(Self::misplaced("a bare string (CHARSXP)", slot, at));
                }
                if f.has_attr() {
                    return Err(Error::malformed("a string with attributes", at));
                }
                let n_at = self.input.offset();
                match self.input.int()? {
                    -1 => Ok(()),
                    n if n < -1 => Err(Error::malformed(format!("a string length of {n}"), n_at)),
                    n => self.input.string(n as usize, None, 0),
                }
            }
            LGLSXP | INTSXP | REALSXP | CPLXSXP | RAWSXP => {
                match slot {
                    Slot::Value | Slot::Wrapped => {}
                    Slot::SeqState { integer } => return self.sequence_state(&f, integer),
                    Slot::DeferredArg if matches!(f.kind, INTSXP | REALSXP) => {}
                    Slot::DeferredInfo | Slot::WrapMeta if f.kind == INTSXP => {
                        let n = self.length()?;
                        if slot == Slot::WrapMeta {
                            if n != 2 || f.has_attr() {
                                return Err(Error::malformed("wrapper metadata of a shape R does not write", at));
                            }
                            let sorted = self.input.int()?;
                            let no_na = self.input.int()?;
                            if !SORTEDNESS.contains(&sorted) || !(0..=1).contains(&no_na) {
                                return Err(Error::malformed("wrapper metadata R does not write", at));
                            }
                            return Ok(());
                        }
                        if n < 1 {
                            return Err(Error::malformed(
                                "deferred string options of a shape R does not write",
                                at,
                            ));
                        }
                        self.input.ints(n)?;
                        if f.has_attr() {
                            self.push(Slot::Attributes, child);
                        }
                        return Ok(());
                    }
                    _ => return Err(Self::misplaced("a vector", slot, at)),
                }
                let n = self.length()?;
                match f.kind {
                    LGLSXP | INTSXP => self.input.ints(n)?,
                    REALSXP => self.input.reals(n)?,
                    CPLXSXP => self.input.complexes(n)?,
                    _ => self.input.raw_bytes(n)?,
                }
                if f.has_attr() {
                    self.push(Slot::Attributes, child);
                }
                Ok(())
            }
            STRSXP | VECSXP | EXPRSXP => {
                if !(slot == Slot::Value || (slot == Slot::Wrapped && f.kind != EXPRSXP)) {
                    return Err(Self::misplaced("a vector", slot, at));
                }
                let n = self.length()?;
                // Elements, then attributes.
                if f.has_attr() {
                    self.push(Slot::Attributes, child);
                }
                let element = if f.kind == STRSXP { Slot::Chars } else { Slot::Value };
                self.push_elements(element, n, child);
                Ok(())
            }
            S4SXP => {
                if slot != Slot::Value {
                    return Err(Self::misplaced("an S4 object", slot, at));
                }
                if f.has_attr() {
                    self.push(Slot::Attributes, child);
                }
                Ok(())
            }
            ALTREP_SXP => {
                if !is(&[Slot::Value, Slot::Wrapped, Slot::DeferredArg]) {
                    return Err(Self::misplaced("an ALTREP object", slot, at));
                }
                let class = self.altrep_class(at)?;
                let state = match class.as_str() {
                    "compact_intseq" => Slot::SeqState { integer: true },
                    "compact_realseq" => Slot::SeqState { integer: false },
                    "deferred_string" => Slot::DeferredState,
                    _ => Slot::WrapState,
                };
                if slot == Slot::DeferredArg && !matches!(state, Slot::SeqState { .. }) {
                    return Err(Error::malformed(
                        format!("a deferred string over an ALTREP {class}"),
                        at,
                    ));
                }
                // State, then attributes.
                self.push(Slot::Attributes, child);
                self.push(state, child);
                Ok(())
            }
            NILSXP | 11 | 12 | 18 | 26..=237 => Err(Error::malformed(
                format!("item type {}, which R does not read", f.kind),
                at,
            )),
        }
    }
}
