//! Link options for the `mcpbox` binary only (the tests and benchmarks link as usual).

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
}
