//! The table of bad options (`bad_options.tsv`) through the Rust front door: every row gives
//! its kind and its message. The other front ends' tests read the same table.

use kompakt_api::options::WriteArgs;
use kompakt_api::testing::bad_options;

#[test]
fn every_bad_option_gives_its_kind_and_message() {
    let cases = bad_options();
    assert!(cases.len() >= 10);
    for case in &cases {
        let int = |name: &str| case.get(name).map(|v| v.parse::<i64>().expect("a number"));
        for (name, _) in &case.options {
            let known = ["codec", "level", "threads", "typesize", "filter", "block_size"];
            assert!(known.contains(&name.as_str()), "{}: unknown option {name}", case.case);
        }
        let args = WriteArgs {
            codec: case.get("codec"),
            level: int("level"),
            threads: int("threads"),
            typesize: int("typesize"),
            filter: case.get("filter"),
            block_size: int("block_size"),
            dictionary: false,
        };
        let e = args.build().expect_err(&case.case);
        assert_eq!(e.kind().name(), case.kind, "{}: {e}", case.case);
        assert!(
            e.to_string().contains(&case.message),
            "{}: the message\n  {e}\ndoes not contain\n  {}",
            case.case,
            case.message
        );
    }
}
