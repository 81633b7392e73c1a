//! Golden streams written by R 4.2 (tests/data/make.R), streams built by hand, and
//! property tests.

use crate::{check_bytes, Error, Format, Policy, Refused};
use proptest::prelude::*;

fn golden(name: &str) -> Vec<u8> {
    let path = format!("{}/tests/data/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

const ENCODINGS: [(&str, Format); 3] = [
    ("xdr", Format::Xdr),
    ("native", Format::Native),
    ("ascii", Format::Ascii),
];

fn refusal(result: Result<crate::Summary, Error>) -> Refused {
    match result {
        Err(Error::Refused { what, .. }) => what,
        other => panic!("expected a refusal, got {other:?}"),
    }
}

#[test]
fn plain_data_from_r_passes_in_every_encoding() {
    for name in ["intseq", "frame", "misc"] {
        for (ext, format) in ENCODINGS {
            let data = golden(&format!("{name}.{ext}"));
            let summary = check_bytes(&data, &Policy::untrusted()).unwrap_or_else(|e| panic!("{name}.{ext}: {e}"));
            assert_eq!(summary.format, format);
            assert_eq!(summary.version, 3);
            assert_eq!(summary.native_encoding.as_deref(), Some("UTF-8"));
            assert_eq!(summary.bytes, data.len() as u64, "{name}.{ext}: R reads every byte");
        }
    }
}

#[test]
fn code_from_r_is_refused_in_every_encoding() {
    let untrusted = Policy::untrusted();
    let with_envs = Policy::untrusted().environments(true);
    for (ext, _) in ENCODINGS {
        let file = |name: &str| golden(&format!("{name}.{ext}"));
        assert_eq!(refusal(check_bytes(&file("closure"), &untrusted)), Refused::Closure);
        assert_eq!(refusal(check_bytes(&file("builtin"), &untrusted)), Refused::Builtin);
        assert_eq!(refusal(check_bytes(&file("namespace"), &untrusted)), Refused::Namespace);
        assert_eq!(
            refusal(check_bytes(&file("promise_env"), &untrusted)),
            Refused::Environment
        );
        assert_eq!(refusal(check_bytes(&file("promise_env"), &with_envs)), Refused::Promise);
        assert_eq!(
            refusal(check_bytes(&file("active_binding"), &with_envs)),
            Refused::ActiveBinding
        );
        assert_eq!(
            refusal(check_bytes(&file("plain_env"), &untrusted)),
            Refused::Environment
        );
        check_bytes(&file("plain_env"), &with_envs).unwrap();
        assert_eq!(
            refusal(check_bytes(&file("data_table"), &untrusted)),
            Refused::ExternalPointer
        );
        check_bytes(&file("data_table"), &Policy::untrusted().external_pointers(true)).unwrap();
    }
}

#[test]
fn every_prefix_of_a_stream_is_truncated() {
    for name in ["intseq", "frame"] {
        for (ext, _) in ENCODINGS {
            let data = golden(&format!("{name}.{ext}"));
            for cut in 0..data.len() {
                match check_bytes(&data[..cut], &Policy::untrusted()) {
                    Err(Error::Truncated { offset }) => assert_eq!(offset, cut as u64),
                    other => panic!("{name}.{ext} cut at {cut}: {other:?}"),
                }
            }
        }
    }
    let data = golden("misc.xdr");
    for cut in (0..data.len()).step_by(997) {
        assert!(matches!(
            check_bytes(&data[..cut], &Policy::untrusted()),
            Err(Error::Truncated { .. })
        ));
    }
}

/// An ascii stream: R's version 3 header, then `items` (one word or string per line).
fn ascii(items: &[&str]) -> Vec<u8> {
    let mut out = String::from("A\n3\n262658\n197888\n5\nUTF-8\n");
    for item in items {
        out.push_str(item);
        out.push('\n');
    }
    out.into_bytes()
}

/// `file.create("x")` as the items of a call.
const CALL: &[&str] = &[
    "6",
    "1",
    "262153",
    "11",
    "file.create",
    "2",
    "16",
    "1",
    "262153",
    "1",
    "x",
    "254",
];

/// A promise whose value is unbound (so R evaluates it when it is used) with `CALL` as
/// code, in the global environment: the shape of CVE-2024-27322.
fn promise() -> Vec<&'static str> {
    let mut items = vec!["1029", "253", "252"];
    items.extend_from_slice(CALL);
    items
}

#[test]
fn a_promise_at_the_top_or_nested_is_refused_with_its_name() {
    let top = ascii(&promise());
    let err = check_bytes(&top, &Policy::untrusted()).unwrap_err();
    assert!(
        matches!(
            err,
            Error::Refused {
                what: Refused::Promise,
                offset: 25
            }
        ),
        "{err:?}"
    );
    let message = err.to_string();
    assert!(
        message.contains("a promise (code that runs when the value is used)"),
        "{message}"
    );

    // list(1L, <promise>) and a promise as an attribute value.
    let mut nested = vec!["19", "2", "13", "1", "1"];
    nested.extend(promise());
    assert_eq!(
        refusal(check_bytes(&ascii(&nested), &Policy::untrusted())),
        Refused::Promise
    );
    let mut attribute = vec!["525", "1", "1", "1026", "1", "262153", "1", "a"];
    attribute.extend(promise());
    attribute.push("254");
    assert_eq!(
        refusal(check_bytes(&ascii(&attribute), &Policy::untrusted())),
        Refused::Promise
    );
    // The call alone is data: built, not run.
    check_bytes(&ascii(CALL), &Policy::untrusted()).unwrap();
}

#[test]
fn altrep_of_another_package_is_refused() {
    let intseq = golden("intseq.ascii");
    let text = String::from_utf8(intseq).unwrap();
    let evil = text.replacen("4\nbase\n", "4\nevil\n", 1);
    assert_ne!(evil, text);
    let what = refusal(check_bytes(evil.as_bytes(), &Policy::untrusted()));
    assert_eq!(
        what,
        Refused::ForeignAltrep {
            class: "compact_intseq".into(),
            package: "evil".into()
        }
    );
    // Base R's memory-mapped vectors map the file their state names.
    let mmap = text.replacen("14\ncompact_intseq\n", "12\nmmap_integer\n", 1);
    assert!(matches!(
        refusal(check_bytes(mmap.as_bytes(), &Policy::untrusted())),
        Refused::ForeignAltrep { .. }
    ));
}

#[test]
fn altrep_states_r_cannot_hold_are_refused() {
    let text = String::from_utf8(golden("intseq.ascii")).unwrap();
    // The state: REALSXP of 3 (10, 1, 1).
    assert!(text.ends_with("14\n3\n10\n1\n1\n254\n"), "{text}");
    let with = |state: &str| text.replacen("14\n3\n10\n1\n1\n", state, 1);
    for bad in [
        "14\n3\n10\n1\n2\n",
        "14\n2\n10\n1\n",
        "13\n0\n",
        "14\n3\nNaN\n1\n1\n",
        "14\n3\n-1\n1\n1\n",
    ] {
        let stream = with(bad);
        assert!(
            matches!(
                check_bytes(stream.as_bytes(), &Policy::untrusted()),
                Err(Error::Malformed { .. })
            ),
            "{bad:?}"
        );
    }
    // Overflowing int: 2147483600 + 100 - 1.
    let stream = with("14\n3\n100\n2147483600\n1\n");
    assert!(check_bytes(stream.as_bytes(), &Policy::untrusted()).is_err());
    // An integer state (older R) is read as R reads it.
    check_bytes(with("13\n3\n10\n1\n1\n").as_bytes(), &Policy::untrusted()).unwrap();
}

#[test]
fn shapes_r_never_writes_are_refused() {
    let malformed = |items: &[&str]| {
        let r = check_bytes(&ascii(items), &Policy::untrusted());
        assert!(matches!(r, Err(Error::Malformed { .. })), "{items:?}: {r:?}");
    };
    // Attributes that are a list, not a pairlist.
    malformed(&["525", "1", "1", "19", "0"]);
    // A bare CHARSXP as a value, and as a list element.
    malformed(&["262153", "1", "a"]);
    malformed(&["19", "1", "9", "1", "a"]);
    // A string vector holding a number.
    malformed(&["16", "1", "13", "1", "1"]);
    // A tag that is not a symbol.
    malformed(&["1026", "13", "1", "1", "254"]);
    // A reference to nothing; a reference index past the table.
    malformed(&["511"]);
    malformed(&["19", "2", "1", "262153", "1", "a", "767"]);
    // Lengths R refuses.
    malformed(&["13", "-2"]);
    malformed(&["13", "-1", "65537", "0"]);
    malformed(&["13", "NA"]);
    // Types R does not read.
    malformed(&["0"]);
    malformed(&["18"]);
    malformed(&["246"]);
    // Words that are not numbers, and overlong words.
    malformed(&["13", "1", "1x"]);
    malformed(&[&"1".repeat(200)]);
    // Not a stream; a version R does not read; an encoding name too long.
    assert!(matches!(
        check_bytes(b"RDX3\n", &Policy::untrusted()),
        Err(Error::Malformed { .. })
    ));
    assert!(matches!(
        check_bytes(b"A\n4\n1\n1\n13\n0\n", &Policy::untrusted()),
        Err(Error::Malformed { .. })
    ));
    assert!(matches!(
        check_bytes(b"A\n3\n1\n1\n64\n", &Policy::untrusted()),
        Err(Error::Malformed { .. })
    ));
}

#[test]
fn other_refusals_name_their_type() {
    let refused = |items: &[&str]| refusal(check_bytes(&ascii(items), &Policy::untrusted()));
    assert_eq!(refused(&["252"]), Refused::UnboundMarker);
    assert_eq!(refused(&["247", "0", "0"]), Refused::PersistentReference);
    assert_eq!(refused(&["248", "0", "0"]), Refused::PackageEnvironment);
    assert_eq!(refused(&["17"]), Refused::DotArguments);
    assert_eq!(refused(&["21"]), Refused::Bytecode);
    assert_eq!(refused(&["23"]), Refused::WeakReference);
    // An active binding bit on any pairlist cell.
    assert_eq!(refused(&["134217730", "13", "1", "1", "254"]), Refused::ActiveBinding);
    for what in [
        Refused::Closure,
        Refused::Environment,
        Refused::Namespace,
        Refused::ExternalPointer,
    ] {
        assert!(!what.to_string().is_empty());
    }
}

#[test]
fn special_environments_and_missing_arguments_pass_as_values() {
    for code in ["253", "242", "241", "250", "251", "254"] {
        check_bytes(&ascii(&[code]), &Policy::untrusted()).unwrap();
    }
}

#[test]
fn nesting_is_bounded() {
    // list(list(...(NULL))) `levels` deep.
    let nested = |levels: usize| {
        let mut items = vec!["19"; 0];
        for _ in 0..levels {
            items.extend(["19", "1"]);
        }
        items.push("254");
        ascii(&items)
    };
    let policy = Policy::untrusted().max_depth(100);
    check_bytes(&nested(99), &policy).unwrap();
    assert!(matches!(
        check_bytes(&nested(100), &policy),
        Err(Error::TooDeep { limit: 100, .. })
    ));
    // A pairlist is as deep as it is long (R recurses on its rest).
    let pairlist = |cells: usize| {
        let mut items = Vec::new();
        for _ in 0..cells {
            items.extend(["2", "254"]);
        }
        items.push("254");
        ascii(&items)
    };
    check_bytes(&pairlist(99), &policy).unwrap();
    assert!(matches!(
        check_bytes(&pairlist(100), &policy),
        Err(Error::TooDeep { .. })
    ));
    // A million levels: an error, not a stack overflow.
    let deep = nested(1_000_000);
    assert!(matches!(
        check_bytes(&deep, &Policy::untrusted()),
        Err(Error::TooDeep { limit: 10_000, .. })
    ));
}

#[test]
fn huge_declared_lengths_cost_nothing_until_their_bytes_are_there() {
    // XDR REALSXP of 2^40 elements with no data; a list of 2^31 - 1 NULLs cut short.
    let mut stream = b"X\n\0\0\0\x02\0\x04\x02\x02\0\x02\x03\0".to_vec();
    stream.extend_from_slice(&14u32.to_be_bytes());
    stream.extend_from_slice(&(-1i32).to_be_bytes());
    stream.extend_from_slice(&256u32.to_be_bytes());
    stream.extend_from_slice(&0u32.to_be_bytes());
    stream.extend_from_slice(&[0; 64]);
    assert!(matches!(
        check_bytes(&stream, &Policy::untrusted()),
        Err(Error::Truncated { .. })
    ));
    let list = ascii(&["19", "2147483647", "254", "254"]);
    assert!(matches!(
        check_bytes(&list, &Policy::untrusted()),
        Err(Error::Truncated { .. })
    ));
}

#[test]
fn ascii_strings_are_read_as_r_reads_them() {
    // Octal escapes; the character after a final octal escape is dropped with R's
    // push-back buffer; a leading newline before A.
    let s = |text: &str| ascii(&["16", "1", "262153", "3", text]);
    check_bytes(&s("a\\101b"), &Policy::untrusted()).unwrap();
    check_bytes(&s("ab\\101"), &Policy::untrusted()).unwrap();
    let mut odd = b"\n".to_vec();
    odd.extend(ascii(&["13", "1", "NA"]));
    check_bytes(&odd, &Policy::untrusted()).unwrap();
    // A non-ASCII byte where R's locale decides what it is.
    assert!(check_bytes(&ascii(&["13", "1", "\u{a0}1"]), &Policy::untrusted()).is_err());
}

#[test]
fn version_2_streams_pass() {
    check_bytes(b"A\n2\n132097\n131840\n13\n2\n1\nNA\n", &Policy::untrusted()).unwrap();
}

/// A plain R value for the property tests, written as R writes it (XDR).
#[derive(Debug, Clone)]
enum Value {
    Null,
    Ints(Vec<Option<i32>>),
    Reals(Vec<f64>),
    Strings(Vec<Option<String>>),
    List(Vec<Value>, Option<Vec<String>>),
}

fn int(out: &mut Vec<u8>, v: i32) {
    out.extend_from_slice(&v.to_be_bytes());
}

fn write(value: &Value, out: &mut Vec<u8>) {
    match value {
        Value::Null => int(out, 254),
        Value::Ints(v) => {
            int(out, 13);
            int(out, v.len() as i32);
            v.iter().for_each(|x| int(out, x.unwrap_or(i32::MIN)));
        }
        Value::Reals(v) => {
            int(out, 14);
            int(out, v.len() as i32);
            v.iter().for_each(|x| out.extend_from_slice(&x.to_be_bytes()));
        }
        Value::Strings(v) => {
            int(out, 16);
            int(out, v.len() as i32);
            for s in v {
                int(out, 0x40009);
                match s {
                    None => int(out, -1),
                    Some(s) => {
                        int(out, s.len() as i32);
                        out.extend_from_slice(s.as_bytes());
                    }
                }
            }
        }
        Value::List(items, names) => {
            int(out, if names.is_some() { 19 | 1 << 9 } else { 19 });
            int(out, items.len() as i32);
            items.iter().for_each(|x| write(x, out));
            if let Some(names) = names {
                int(out, 2 | 1 << 10);
                int(out, 1);
                int(out, 0x40009);
                int(out, 5);
                out.extend_from_slice(b"names");
                write(&Value::Strings(names.iter().cloned().map(Some).collect()), out);
                int(out, 254);
            }
        }
    }
}

fn stream(value: &Value) -> Vec<u8> {
    let mut out = b"X\n".to_vec();
    for v in [3, 0x40202, 0x30500, 5] {
        int(&mut out, v);
    }
    out.extend_from_slice(b"UTF-8");
    write(value, &mut out);
    out
}

fn value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        prop::collection::vec(any::<Option<i32>>(), 0..20).prop_map(Value::Ints),
        prop::collection::vec(any::<f64>(), 0..20).prop_map(Value::Reals),
        prop::collection::vec(prop::option::of("[a-z\u{e9}]{0,8}"), 0..10).prop_map(Value::Strings),
    ];
    leaf.prop_recursive(6, 64, 8, |inner| {
        prop::collection::vec(inner, 0..8).prop_flat_map(|items| {
            let n = items.len();
            (
                Just(items),
                prop::option::of(prop::collection::vec("[a-z]{1,4}", n..=n)),
            )
                .prop_map(|(items, names)| Value::List(items, names))
        })
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn plain_values_pass_and_are_read_to_their_end(v in value()) {
        let data = stream(&v);
        let summary = check_bytes(&data, &Policy::untrusted()).unwrap();
        prop_assert_eq!(summary.bytes, data.len() as u64);
    }

    #[test]
    fn any_bytes_give_an_answer(data in prop::collection::vec(any::<u8>(), 0..512)) {
        let _ = check_bytes(&data, &Policy::untrusted());
        let _ = check_bytes(&data, &Policy::untrusted().environments(true).external_pointers(true));
    }

    #[test]
    fn damaged_golden_streams_give_an_answer(
        which in 0usize..6,
        edits in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..6),
    ) {
        let name = ["intseq.xdr", "intseq.ascii", "frame.xdr", "frame.native", "frame.ascii", "data_table.xdr"][which];
        let mut data = golden(name);
        for (at, byte) in edits {
            let i = at.index(data.len());
            data[i] = byte;
        }
        let _ = check_bytes(&data, &Policy::untrusted().environments(true).external_pointers(true));
    }
}
