//! The table of bad options every front end checks (crates/kompakt-api/tests/bad_options.tsv),
//! through the command line: each row exits 2 with the table's message on stderr.

use kompakt_api::testing::bad_options;
use std::process::Command;

fn flag(name: &str) -> &'static str {
    match name {
        "codec" => "--codec",
        "level" => "--level",
        "threads" => "--threads",
        "typesize" => "--typesize",
        "filter" => "--filter",
        "block_size" => "--block-size",
        other => panic!("unknown option {other}"),
    }
}

#[test]
fn every_bad_option_exits_2_with_the_message_of_every_front_end() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("data.bin");
    std::fs::write(&input, b"kompakt ".repeat(1000)).unwrap();
    for case in bad_options() {
        let mut args = vec![
            "compress".to_string(),
            input.display().to_string(),
            "-o".into(),
            dir.path().join("out.kpk").display().to_string(),
            "--force".into(),
        ];
        for (name, value) in &case.options {
            // `--level=-1`: one word, so a negative value is never taken for a flag.
            args.push(format!("{}={value}", flag(name)));
        }
        let out = Command::new(env!("CARGO_BIN_EXE_kompakt"))
            .args(&args)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        // Every kind but "corrupt" exits 2.
        let expected = if case.kind == "corrupt" { 1 } else { 2 };
        assert_eq!(out.status.code(), Some(expected), "{}: {stderr}", case.case);
        assert!(
            stderr.contains(&case.message),
            "{}: stderr\n  {stderr}\ndoes not contain\n  {}",
            case.case,
            case.message
        );
        assert!(!dir.path().join("out.kpk").exists(), "{}: no output", case.case);
    }
}
