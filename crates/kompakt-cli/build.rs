//! Links the `kompakt` binary as a position-dependent executable: a position-independent one
//! (the default) has its loader apply some 60,000 relocations at every start, which cost
//! 1.4 ms of a 2.7 ms `kompakt --version` (docs/DESIGN.md, "The command line's start").
fn main() {
    println!("cargo:rustc-link-arg-bins=-no-pie");
}
