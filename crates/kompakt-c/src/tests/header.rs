//! `include/kompakt.h` against this crate, so that neither drifts from the other:
//!
//! - every `#[no_mangle] extern "C" fn` of the crate is declared in the header exactly once,
//!   with the same parameter and return types, and the header declares no other function;
//! - every struct the header defines has the fields of the crate's `#[repr(C)]` struct, in
//!   order and of the same types, and a C compiler gives them the sizes and offsets Rust does;
//! - every `KPK_` constant of the header is one of the crate's, with the same value as the
//!   compiled header gives it, and the other way round.
//!
//! The layouts and values come from a small C program generated from the header, built with
//! the C compiler (`$CC`, else `cc`) as a front end would build it.

use crate::table::kpk_table_options;
use crate::*;
use arrow_array::ffi::{FFI_ArrowArray, FFI_ArrowSchema};
use arrow_array::ffi_stream::FFI_ArrowArrayStream;
use std::collections::{BTreeMap, BTreeSet};
use std::mem::{offset_of, size_of};
use std::path::{Path, PathBuf};

fn crate_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn header_text() -> String {
    std::fs::read_to_string(crate_dir().join("include/kompakt.h")).unwrap()
}

// ---- the header, parsed -----------------------------------------------------------------------

/// A function: its name, parameter types and return type (in the crate's spelling).
type Signature = (String, Vec<String>, String);

/// Fields of a struct: (name, type).
type Fields = Vec<(String, String)>;

/// What the header declares.
#[derive(Debug, Default)]
struct Header {
    /// `#define NAME VALUE` with a value.
    defines: Vec<String>,
    /// Structs: their name (`kpk_bytes`, `struct ArrowSchema`) and fields (name, type).
    structs: BTreeMap<String, Fields>,
    /// Functions.
    functions: Vec<Signature>,
}

/// Removes comments, and what only a C++ compiler sees.
fn strip(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(start) = rest.find("/*") {
        out.push_str(&rest[..start]);
        let end = rest[start..].find("*/").expect("a comment that ends") + start + 2;
        rest = &rest[end..];
    }
    out.push_str(rest);
    let mut kept = Vec::new();
    let mut in_cplusplus = false;
    for line in out.lines() {
        let line = line.split("//").next().unwrap().trim_end();
        if line.trim_start().starts_with("#ifdef __cplusplus") {
            in_cplusplus = true;
        } else if in_cplusplus {
            in_cplusplus = !line.trim_start().starts_with("#endif");
        } else {
            kept.push(line);
        }
    }
    kept.join("\n")
}

/// A C type (without a name) in the crate's spelling: `const char *const *` is
/// `*const *const c_char`, `kpk_writer **` is `*mut *mut kpk_writer`.
fn rust_type(c: &str) -> String {
    let spaced = c.replace('*', " * ");
    let mut tokens = spaced.split_whitespace().peekable();
    let mut base = Vec::new();
    let mut is_const = false;
    while let Some(&t) = tokens.peek() {
        if t == "*" {
            break;
        }
        match t {
            "const" => is_const = true,
            t => base.push(t),
        }
        tokens.next();
    }
    let mut out = match base.join(" ").as_str() {
        "void" if tokens.peek().is_none() => return "()".into(),
        "void" => "c_void".into(),
        "char" => "c_char".into(),
        "int32_t" => "i32".into(),
        "uint32_t" => "u32".into(),
        "int64_t" => "i64".into(),
        "uint64_t" => "u64".into(),
        "uint8_t" => "u8".into(),
        "double" => "f64".into(),
        "size_t" => "usize".into(),
        "struct ArrowSchema" => "FFI_ArrowSchema".into(),
        "struct ArrowArray" => "FFI_ArrowArray".into(),
        "struct ArrowArrayStream" => "FFI_ArrowArrayStream".into(),
        other => other.to_string(),
    };
    while tokens.next() == Some("*") {
        out = format!("*{} {out}", if is_const { "const" } else { "mut" });
        is_const = tokens.next_if_eq(&"const").is_some();
    }
    out
}

/// A declaration `TYPE NAME` split into the type (in the crate's spelling) and the name.
fn split_declaration(decl: &str) -> (String, String) {
    let decl = decl.trim();
    let at = decl
        .rfind(|ch: char| !(ch.is_alphanumeric() || ch == '_'))
        .map_or(0, |i| i + 1);
    (rust_type(&decl[..at]), decl[at..].to_string())
}

fn parse_header(text: &str) -> Header {
    let mut header = Header::default();
    let text = strip(text);
    let mut code = String::new();
    for line in text.lines() {
        let words: Vec<&str> = line.split_whitespace().collect();
        match words.as_slice() {
            ["#define", name, _value, ..] => header.defines.push(name.to_string()),
            [w, ..] if w.starts_with('#') => {}
            _ => {
                code.push_str(line);
                code.push('\n');
            }
        }
    }
    // Struct bodies: `typedef struct { ... } name;` and `struct Name { ... };`.
    while let Some(open) = code.find('{') {
        let close = code[open..].find('}').unwrap() + open;
        let head_start = code[..open].rfind(';').map_or(0, |i| i + 1);
        let head = code[head_start..open].trim().to_string();
        let end = code[close..].find(';').unwrap() + close;
        let name = match head.as_str() {
            "typedef struct" => code[close + 1..end].trim().to_string(),
            h => h.to_string(),
        };
        let fields = code[open + 1..close]
            .split(';')
            .map(str::trim)
            .filter(|f| !f.is_empty())
            .map(|f| match f.find("(*") {
                // A function pointer (Arrow's release callbacks): its name only.
                Some(i) => ("fn".to_string(), f[i + 2..].split(')').next().unwrap().to_string()),
                None => split_declaration(f),
            })
            .map(|(ty, name)| (name, ty))
            .collect();
        header.structs.insert(name, fields);
        code.replace_range(head_start..end + 1, "");
    }
    for statement in code.split(';').map(str::trim).filter(|s| !s.is_empty()) {
        if statement.starts_with("typedef") {
            continue;
        }
        let open = statement
            .find('(')
            .unwrap_or_else(|| panic!("not a function: {statement}"));
        let (ret, name) = split_declaration(&statement[..open]);
        let params = statement[open + 1..statement.rfind(')').unwrap()].trim();
        let params = match params {
            "void" | "" => Vec::new(),
            p => p.split(',').map(|p| split_declaration(p).0).collect(),
        };
        header.functions.push((name, params, ret));
    }
    header
}

// ---- the crate's source, scanned --------------------------------------------------------------

fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_str().unwrap();
        if path.is_dir() && name != "tests" {
            sources(&path, out);
        } else if name.ends_with(".rs") && name != "tests.rs" {
            out.push(path);
        }
    }
}

fn normalize(rust: &str) -> String {
    rust.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The crate's exported functions (name, parameter types, return type), its `#[repr(C)]`
/// structs (name, fields) and the names of its `KPK_` constants.
fn scan_crate() -> (Vec<Signature>, BTreeMap<String, Fields>, BTreeSet<String>) {
    let mut files = Vec::new();
    sources(&crate_dir().join("src"), &mut files);
    let (mut functions, mut structs, mut consts) = (Vec::new(), BTreeMap::new(), BTreeSet::new());
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap();
        let code: String = text
            .lines()
            .filter(|l| !l.trim_start().starts_with("//"))
            .collect::<Vec<_>>()
            .join("\n");
        let exported = code.matches("extern \"C\" fn").count();
        assert_eq!(
            exported,
            code.matches("#[no_mangle]").count(),
            "{}: every extern \"C\" fn is #[no_mangle], and only they are",
            file.display()
        );
        let mut rest = code.as_str();
        while let Some(at) = rest.find("extern \"C\" fn ") {
            rest = &rest[at + "extern \"C\" fn ".len()..];
            let open = rest.find('(').unwrap();
            let name = rest[..open].trim().to_string();
            let close = rest.find(')').unwrap();
            let params = rest[open + 1..close]
                .split(',')
                .map(str::trim)
                .filter(|p| !p.is_empty())
                .map(|p| normalize(p.split_once(':').unwrap().1))
                .collect();
            let body = rest.find('{').unwrap();
            let ret = rest[close + 1..body].trim().trim_start_matches("->").trim();
            let ret = if ret.is_empty() {
                "()".to_string()
            } else {
                normalize(ret)
            };
            functions.push((name, params, ret));
        }
        let lines: Vec<&str> = code.lines().map(str::trim).collect();
        for (i, _) in lines.iter().enumerate().filter(|(_, l)| **l == "#[repr(C)]") {
            let Some(item) = lines[i + 1..].iter().position(|l| !l.starts_with("#[")) else {
                continue;
            };
            let Some(name) = lines[i + 1 + item].strip_prefix("pub struct ") else {
                continue; // a test's own struct
            };
            let name = name.trim_end_matches('{').trim().to_string();
            let body = &lines[i + 2 + item..];
            let end = body.iter().position(|l| *l == "}").unwrap();
            let fields = body[..end]
                .iter()
                .map(|f| {
                    let (name, ty) = f.trim_start_matches("pub ").split_once(':').unwrap();
                    (name.trim().to_string(), normalize(ty.trim_end_matches(',')))
                })
                .collect();
            structs.insert(name, fields);
        }
        for line in code.lines() {
            if let Some(rest) = line.trim().strip_prefix("pub const KPK_") {
                consts.insert(format!("KPK_{}", rest.split(':').next().unwrap()));
            }
        }
    }
    (functions, structs, consts)
}

// ---- the checks -------------------------------------------------------------------------------

#[test]
fn every_exported_function_is_declared_once_with_its_signature() {
    let header = parse_header(&header_text());
    let (functions, _, _) = scan_crate();
    let mut declared: BTreeMap<&str, Vec<&Signature>> = BTreeMap::new();
    for f in &header.functions {
        declared.entry(f.0.as_str()).or_default().push(f);
    }
    let twice: Vec<_> = declared.iter().filter(|(_, d)| d.len() > 1).map(|(n, _)| *n).collect();
    assert!(twice.is_empty(), "declared more than once in kompakt.h: {twice:?}");
    let exported: BTreeMap<&str, _> = functions.iter().map(|f| (f.0.as_str(), f)).collect();
    assert_eq!(exported.len(), functions.len(), "a function exported twice");
    let missing: Vec<_> = exported.keys().filter(|n| !declared.contains_key(*n)).collect();
    assert!(
        missing.is_empty(),
        "exported but not declared in kompakt.h: {missing:?}"
    );
    let extra: Vec<_> = declared.keys().filter(|n| !exported.contains_key(*n)).collect();
    assert!(extra.is_empty(), "declared in kompakt.h but not exported: {extra:?}");
    for (name, rust) in exported {
        let c = declared[name][0];
        assert_eq!(
            (&c.1, &c.2),
            (&rust.1, &rust.2),
            "{name}: kompakt.h (left) and the crate"
        );
    }
    assert!(header.functions.len() >= 50, "{} functions", header.functions.len());
}

/// Sizes and field offsets as Rust lays the structs out: (struct, field or "", value).
macro_rules! layouts {
    ($(($c:expr, $t:ty, [$($f:ident),*])),* $(,)?) => {
        vec![$(
            ($c, size_of::<$t>(), vec![$((stringify!($f), offset_of!($t, $f))),*]),
        )*]
    };
}

/// The `KPK_` constants and their values in Rust.
fn rust_constants() -> BTreeMap<&'static str, i64> {
    macro_rules! values {
        ($($name:ident),* $(,)?) => { BTreeMap::from([$((stringify!($name), $name as i64)),*]) };
    }
    values!(
        KPK_API_VERSION,
        KPK_OK,
        KPK_ERROR_IO,
        KPK_ERROR_CORRUPT,
        KPK_ERROR_OPTION,
        KPK_ERROR_USAGE,
        KPK_ERROR_INTERNAL,
        KPK_ERROR_STORE,
        KPK_ERROR_REFUSED,
        KPK_ERROR_DICTIONARY,
        KPK_ERROR_LIMIT,
        KPK_LEVEL_DEFAULT,
        KPK_LEVEL_NONE,
        KPK_FILE_PLAIN,
        KPK_FILE_TABLE,
        KPK_FILE_PYTHON_OBJECT,
        KPK_FILE_R_OBJECT,
        KPK_RSERIAL_ENVIRONMENTS,
        KPK_RSERIAL_EXTERNAL_POINTERS,
    )
}

#[test]
fn structs_and_constants_are_laid_out_as_the_compiled_header_has_them() {
    let header = parse_header(&header_text());
    let (_, rust_structs, rust_consts) = scan_crate();
    let constants = rust_constants();
    let header_consts: BTreeSet<String> = header
        .defines
        .iter()
        .filter(|d| d.starts_with("KPK_"))
        .cloned()
        .collect();
    let listed: BTreeSet<String> = constants.keys().map(|k| k.to_string()).collect();
    assert_eq!(
        header_consts, rust_consts,
        "KPK_ constants: kompakt.h (left) and the crate"
    );
    assert_eq!(
        listed, rust_consts,
        "this test's list (left) and the crate's KPK_ constants"
    );

    // Fields, names and types: the header's against the crate's #[repr(C)] structs.
    let ours: Vec<&String> = header
        .structs
        .keys()
        .filter(|k| !k.starts_with("struct Arrow"))
        .collect();
    assert_eq!(
        ours,
        rust_structs.keys().collect::<Vec<_>>(),
        "structs: kompakt.h (left) and the crate"
    );
    for (name, fields) in &rust_structs {
        assert_eq!(&header.structs[name], fields, "{name}: kompakt.h (left) and the crate");
    }

    let layouts = layouts![
        ("kpk_bytes", kpk_bytes, [data, len]),
        ("kpk_strings", kpk_strings, [items, lens, count]),
        (
            "kpk_write_options",
            kpk_write_options,
            [size, level, threads, typesize, block_size, codec, filter, sync]
        ),
        (
            "kpk_table_options",
            kpk_table_options,
            [
                size,
                level,
                codec,
                string_codec,
                threads,
                rows_per_group,
                sort_columns,
                sort_descending,
                sort_nulls_first,
                n_sort,
                metadata_keys,
                metadata_values,
                n_metadata,
                sync
            ]
        ),
        ("kpk_filter", kpk_filter, [column, op, values_schema, values]),
        (
            "kpk_store_options",
            kpk_store_options,
            [
                size,
                level,
                threads,
                durable,
                must_exist,
                codec,
                cache_dir,
                cache_limit,
                grace_seconds,
                multipart_threshold
            ]
        ),
        ("struct ArrowSchema", FFI_ArrowSchema, []),
        ("struct ArrowArray", FFI_ArrowArray, []),
        ("struct ArrowArrayStream", FFI_ArrowArrayStream, []),
    ];
    let mut want = BTreeMap::new();
    let mut program =
        String::from("#include <stddef.h>\n#include <stdio.h>\n#include \"kompakt.h\"\nint main(void) {\n");
    for (name, size, fields) in &layouts {
        assert!(header.structs.contains_key(*name), "kompakt.h defines no {name}");
        if !name.starts_with("struct ") {
            let listed: Vec<&str> = fields.iter().map(|f| f.0).collect();
            let declared: Vec<&str> = header.structs[*name].iter().map(|f| f.0.as_str()).collect();
            assert_eq!(listed, declared, "{name}: this test's list (left) and kompakt.h");
        }
        want.insert(format!("sizeof {name}"), *size as i64);
        program.push_str(&format!("    printf(\"sizeof {name} %zu\\n\", sizeof({name}));\n"));
        for (field, offset) in fields {
            want.insert(format!("offsetof {name}.{field}"), *offset as i64);
            program.push_str(&format!(
                "    printf(\"offsetof {name}.{field} %zu\\n\", offsetof({name}, {field}));\n"
            ));
        }
    }
    for (name, value) in &constants {
        want.insert(format!("define {name}"), *value);
        program.push_str(&format!(
            "    printf(\"define {name} %lld\\n\", (long long)({name}));\n"
        ));
    }
    program.push_str("    return 0;\n}\n");

    let got: BTreeMap<String, i64> = run_c(&program)
        .lines()
        .map(|l| {
            let (k, v) = l.rsplit_once(' ').unwrap();
            (k.to_string(), v.parse().unwrap())
        })
        .collect();
    assert_eq!(got, want, "the compiled header (left) and the crate");
}

/// Builds `program` against the header with the C compiler, as a front end would (C11, every
/// warning an error), runs it and returns what it prints.
fn run_c(program: &str) -> String {
    let dir = tempfile::tempdir().unwrap();
    let (source, binary) = (dir.path().join("layout.c"), dir.path().join("layout"));
    std::fs::write(&source, program).unwrap();
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".into());
    let built = std::process::Command::new(&cc)
        .args(["-std=c11", "-Wall", "-Wextra", "-Wpedantic", "-Werror", "-I"])
        .arg(crate_dir().join("include"))
        .arg("-o")
        .arg(&binary)
        .arg(&source)
        .output()
        .unwrap_or_else(|e| panic!("the C compiler {cc:?} (set CC to another): {e}"));
    assert!(
        built.status.success(),
        "{cc} failed on the header:\n{}\n{program}",
        String::from_utf8_lossy(&built.stderr)
    );
    let ran = std::process::Command::new(&binary).output().unwrap();
    assert!(ran.status.success());
    String::from_utf8(ran.stdout).unwrap()
}

#[test]
fn the_parser_reads_c_types_as_the_crate_spells_them() {
    assert_eq!(rust_type("const char *const *"), "*const *const c_char");
    assert_eq!(rust_type("kpk_writer **"), "*mut *mut kpk_writer");
    assert_eq!(rust_type("struct ArrowSchema *"), "*mut FFI_ArrowSchema");
    assert_eq!(rust_type("const void *"), "*const c_void");
    assert_eq!(rust_type("void"), "()");
    assert_eq!(rust_type("uint32_t"), "u32");
    assert_eq!(
        split_declaration("const kpk_reader *reader"),
        ("*const kpk_reader".into(), "reader".into())
    );
    // A declaration given twice is seen twice (the check above then refuses it).
    let twice = parse_header("/* x */\nuint32_t kpk_a(void);\n#define KPK_B 1\nuint32_t kpk_a(void);\n");
    assert_eq!(twice.functions.len(), 2);
    assert_eq!(twice.defines, ["KPK_B"]);
}

#[test]
fn the_shared_library_is_named_after_the_api_version() {
    let build = std::fs::read_to_string(crate_dir().join("build.rs")).unwrap();
    let line = format!("const API_VERSION: u32 = {KPK_API_VERSION};");
    assert!(build.contains(&line), "build.rs must say {line}");
}
