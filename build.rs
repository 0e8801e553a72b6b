//! Records the git commit the binary is built from, for every output
//! file's metadata (`metadata::base`): the commit's hash, `+modified` when
//! files git tracks differed from it at build time, or `unknown` outside a
//! git checkout (a crate unpacked from a registry).

use std::process::Command;

fn git(args: &[&str]) -> Option<String> {
    let out = Command::new("git").args(args).output().ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
}

fn main() {
    let commit = match git(&["rev-parse", "HEAD"]) {
        Some(hash) if !hash.is_empty() => {
            let modified = git(&["status", "--porcelain", "--untracked-files=no"])
                .is_some_and(|s| !s.is_empty());
            format!("{hash}{}", if modified { "+modified" } else { "" })
        }
        _ => "unknown".to_string(),
    };
    println!("cargo:rustc-env=TETHER_SWEEP_GIT_COMMIT={commit}");
    // A new commit, a checkout or a staged change; and the package's own
    // files, whose edits make a checkout modified.
    for path in [
        "build.rs",
        ".git/HEAD",
        ".git/index",
        ".git/refs/heads",
        ".git/packed-refs",
        "src",
        "shaders",
        "Cargo.toml",
    ] {
        println!("cargo:rerun-if-changed={path}");
    }
}
