//! Link options for the `mcpbox` binary only (the tests and benchmarks link as usual), and the
//! guard that keeps the `failpoints` feature out of every build but the test suite's.

fn main() {
    // The binary is position-independent (ASLR) and carries 62,000 relative relocations that
    // the dynamic loader applies at every start: 1.5 MB of RELA entries read, 15% of a cached
    // start-up. Packed as RELR (glibc 2.36 and binutils 2.38 on, Debian 12 has both) the table
    // is a few KB and applying it is a tight loop.
    if std::env::var("CARGO_CFG_TARGET_OS").as_deref() == Ok("linux")
        && std::env::var("CARGO_CFG_TARGET_ENV").as_deref() == Ok("gnu")
    {
        println!("cargo:rustc-link-arg-bin=mcpbox=-Wl,-z,pack-relative-relocs");
    }
    // The `failpoints` feature compiles switches that turn protections off (src/failpoint.rs).
    // Only the test command builds it, saying so with MCPBOX_TEST_FAILPOINTS=1: an
    // `--all-features` build or install stops here instead of making such a binary.
    if std::env::var_os("CARGO_FEATURE_FAILPOINTS").is_some() {
        println!("cargo:rerun-if-env-changed=MCPBOX_TEST_FAILPOINTS");
        println!("cargo:rerun-if-changed=build.rs");
        if std::env::var("MCPBOX_TEST_FAILPOINTS").as_deref() != Ok("1") {
            println!(
                "cargo::error=the `failpoints` feature builds a test-only mcpbox whose protections can be \
                 switched off; only the test suite builds it (scripts/test.sh, with MCPBOX_TEST_FAILPOINTS=1). \
                 Build mcpbox without it (no --all-features)"
            );
        }
    }
}
