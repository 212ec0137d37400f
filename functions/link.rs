//! The build script of every function (and of the cold-start baseline): links the Lambda's
//! executable at a fixed address (non-PIE) on Linux.
//!
//! A position-independent executable spends most of its start-up in the dynamic loader: the
//! dialer has about 100,000 relative relocations, one per pointer in its 2 MB of `.data.rel.ro`
//! (vtables, string tables), and writing them faults in and copies every one of those pages
//! before `main` runs (~560 of a start's ~750 page faults; docs/scaling.md §7.3). Linked at a
//! fixed address, the linker resolves those pointers once and the pages are read from the file
//! only when touched. The cost is ASLR for the executable's own image (libraries, stack and heap
//! stay randomised).
//!
//! A link argument for this package's binaries alone, rather than a `rustflags` setting:
//! `-no-pie` given to every crate would also reach the shared libraries some dependencies
//! build, and the GNU toolchain then links those as executables; the dependencies' code is
//! unchanged (position-independent code links into a fixed-address executable as it is), so
//! switching needs no rebuild of them.

fn main() {
    if std::env::var("CARGO_CFG_TARGET_OS").as_deref() == Ok("linux") {
        println!("cargo::rustc-link-arg-bins=-no-pie");
    }
}
