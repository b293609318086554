//! Builds the web app in `web/` into `OUT_DIR/web/index.html` for embedding, so that a
//! fresh clone builds a working viewer with `cargo build --release` alone.
//!
//! When npm is available: `npm ci` (only when `web/node_modules` is missing or
//! `web/package-lock.json` changed since the last install), then `vite build` into
//! `OUT_DIR`. Nothing built is ever written into `web/` besides `node_modules`. Builds
//! from several target directories share `web/node_modules`, so they take turns under
//! a file lock. When npm is missing (or the build fails), the binary embeds a page that
//! says in one sentence what to run, and cargo prints a warning; set
//! `MEMLENS_WEB_REQUIRED=1` to make that a build error instead (CI does).

use std::fs::{self, File};
use std::hash::{DefaultHasher, Hash, Hasher};
use std::path::{Path, PathBuf};
use std::process::Command;

const PLACEHOLDER: &str = r#"<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>memlens</title></head>
<body style="font: 16px/1.5 system-ui, sans-serif; max-width: 40em; margin: 4em auto">
<p>This memlens was built without its web viewer because npm was not available: install
Node.js (20.19 or newer) with npm, then run <code>cargo build --release</code> again.</p>
</body></html>
"#;

fn main() {
    let manifest = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("set by cargo"));
    let web = manifest.join("../../web");
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("set by cargo")).join("web");
    for input in [
        "src",
        "index.html",
        "package.json",
        "package-lock.json",
        "vite.config.ts",
        "tsconfig.json",
    ] {
        println!("cargo:rerun-if-changed={}", web.join(input).display());
    }
    println!("cargo:rerun-if-env-changed=MEMLENS_WEB_REQUIRED");
    fs::create_dir_all(&out).expect("cannot create OUT_DIR/web");
    match build_web(&web, &out) {
        Ok(()) => println!("cargo:rustc-env=MEMLENS_WEB_APP=built"),
        Err(reason) => {
            if std::env::var_os("MEMLENS_WEB_REQUIRED").is_some_and(|v| v == "1") {
                panic!("the web viewer could not be built: {reason}");
            }
            println!(
                "cargo:warning=memlens viewer: {reason}; the binary embeds a page that says how to get the viewer"
            );
            fs::write(out.join("index.html"), PLACEHOLDER).expect("cannot write the placeholder");
            println!("cargo:rustc-env=MEMLENS_WEB_APP=placeholder");
        }
    }
}

fn build_web(web: &Path, out: &Path) -> Result<(), String> {
    let npm_found = Command::new("npm")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !npm_found {
        return Err("npm was not found".to_owned());
    }
    let lock_text = fs::read(web.join("package-lock.json"))
        .map_err(|e| format!("web/package-lock.json: {e}"))?;
    // Builds in other target directories install into the same node_modules.
    let lock = lock_file(web)?;
    lock.lock()
        .map_err(|e| format!("cannot lock the web build: {e}"))?;
    let stamp = web.join("node_modules/.memlens-lock-hash");
    let hash = {
        let mut h = DefaultHasher::new();
        lock_text.hash(&mut h);
        format!("{:016x}", h.finish())
    };
    let installed = fs::read_to_string(&stamp).is_ok_and(|s| s.trim() == hash);
    if !installed {
        run(web, &["ci", "--no-audit", "--no-fund"])?;
        fs::write(&stamp, &hash).map_err(|e| format!("{}: {e}", stamp.display()))?;
    }
    let out_arg = out.to_str().ok_or("OUT_DIR is not UTF-8")?;
    run(
        web,
        &["run", "build", "--", "--outDir", out_arg, "--emptyOutDir"],
    )?;
    if !out.join("index.html").is_file() {
        return Err("vite build wrote no index.html".to_owned());
    }
    Ok(())
}

/// A lock file outside the source tree, one per checkout.
fn lock_file(web: &Path) -> Result<File, String> {
    let mut h = DefaultHasher::new();
    web.canonicalize()
        .unwrap_or_else(|_| web.to_path_buf())
        .hash(&mut h);
    let path = std::env::temp_dir().join(format!("memlens-web-build-{:016x}.lock", h.finish()));
    File::create(&path).map_err(|e| format!("{}: {e}", path.display()))
}

fn run(web: &Path, args: &[&str]) -> Result<(), String> {
    let output = Command::new("npm")
        .args(args)
        .current_dir(web)
        .output()
        .map_err(|e| format!("`npm {}` did not start: {e}", args.join(" ")))?;
    if output.status.success() {
        return Ok(());
    }
    let log = String::from_utf8_lossy(&output.stderr);
    let tail: Vec<&str> = log.lines().rev().take(15).collect();
    let tail: Vec<&str> = tail.into_iter().rev().collect();
    Err(format!(
        "`npm {}` failed ({}): {}",
        args.join(" "),
        output.status,
        tail.join(" | ")
    ))
}
