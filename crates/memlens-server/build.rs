//! Builds the web app in `web/` into `OUT_DIR/web/index.html` for embedding, so that a
//! fresh clone builds a working viewer with `cargo build --release` alone.
//!
//! A build writes only under `OUT_DIR` (besides npm's own download cache). The app's
//! inputs ([`INPUTS`]) are copied into `OUT_DIR/web-app/`, npm installs its packages
//! there (`npm ci`, only when `package-lock.json` changed since the last install in that
//! folder, which persists between builds of one profile), and `vite build` writes
//! `OUT_DIR/web/`. The source tree's `web/node_modules` belongs to `web/test.sh` and is
//! neither read nor written here. Builds into one `OUT_DIR` take turns under a file
//! lock, `OUT_DIR/web-app.lock`. When npm is missing (or the build fails), the binary
//! embeds a page that says in one sentence what to run, and cargo prints a warning; set
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

/// What `vite build` reads from `web/`: files, or folders copied whole.
const INPUTS: [&str; 6] = [
    "src",
    "index.html",
    "package.json",
    "package-lock.json",
    "vite.config.ts",
    "tsconfig.json",
];

/// Where, inside the app's copy, the hash of the lock file of the last `npm ci` is kept
/// (inside `node_modules`, so that an interrupted install, which removes it, runs again).
const INSTALLED_STAMP: &str = "node_modules/.memlens-lock-hash";

fn main() {
    let manifest = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("set by cargo"));
    let web = manifest.join("../../web");
    let out_dir = PathBuf::from(std::env::var_os("OUT_DIR").expect("set by cargo"));
    let out = out_dir.join("web");
    for input in INPUTS {
        println!("cargo:rerun-if-changed={}", web.join(input).display());
    }
    println!("cargo:rerun-if-env-changed=MEMLENS_WEB_REQUIRED");
    fs::create_dir_all(&out).expect("cannot create OUT_DIR/web");
    match build_web(&web, &out_dir.join("web-app"), &out) {
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

/// Copies the app from `web` into `app`, installs its packages there when needed and
/// builds it into `out`.
fn build_web(web: &Path, app: &Path, out: &Path) -> Result<(), String> {
    let npm_found = Command::new("npm")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !npm_found {
        return Err("npm was not found".to_owned());
    }
    fs::create_dir_all(app).map_err(|e| format!("{}: {e}", app.display()))?;
    // Two builds of the same OUT_DIR must not copy into or install into it at once.
    let lock_path = app.with_extension("lock");
    let lock = File::create(&lock_path).map_err(|e| format!("{}: {e}", lock_path.display()))?;
    lock.lock()
        .map_err(|e| format!("cannot lock the web build: {e}"))?;
    for input in INPUTS {
        copy_fresh(&web.join(input), &app.join(input))?;
    }
    let lock_text = fs::read(app.join("package-lock.json"))
        .map_err(|e| format!("web/package-lock.json: {e}"))?;
    let hash = {
        let mut h = DefaultHasher::new();
        lock_text.hash(&mut h);
        format!("{:016x}", h.finish())
    };
    let stamp = app.join(INSTALLED_STAMP);
    let installed = fs::read_to_string(&stamp).is_ok_and(|s| s.trim() == hash);
    if !installed {
        run(app, &["ci", "--no-audit", "--no-fund"])?;
        fs::write(&stamp, &hash).map_err(|e| format!("{}: {e}", stamp.display()))?;
    }
    let out_arg = out.to_str().ok_or("OUT_DIR is not UTF-8")?;
    run(
        app,
        &["run", "build", "--", "--outDir", out_arg, "--emptyOutDir"],
    )?;
    if !out.join("index.html").is_file() {
        return Err("vite build wrote no index.html".to_owned());
    }
    Ok(())
}

/// Makes `to` a copy of `from` (a file, or a folder copied whole), removing what an
/// earlier copy left there, so that a file deleted from `web/` is gone from the build too.
fn copy_fresh(from: &Path, to: &Path) -> Result<(), String> {
    let failed = |path: &Path, e: std::io::Error| format!("{}: {e}", path.display());
    if to.is_dir() {
        fs::remove_dir_all(to).map_err(|e| failed(to, e))?;
    }
    if !from.is_dir() {
        fs::copy(from, to).map_err(|e| failed(from, e))?;
        return Ok(());
    }
    fs::create_dir_all(to).map_err(|e| failed(to, e))?;
    for entry in fs::read_dir(from).map_err(|e| failed(from, e))? {
        let entry = entry.map_err(|e| failed(from, e))?;
        copy_fresh(&entry.path(), &to.join(entry.file_name()))?;
    }
    Ok(())
}

fn run(app: &Path, args: &[&str]) -> Result<(), String> {
    let output = Command::new("npm")
        .args(args)
        .current_dir(app)
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
