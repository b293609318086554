//! Which memlens crates a crate depends on, read from its `Cargo.toml`.

/// The package names of the memlens crates (names starting with `memlens`) that a
/// manifest lists under `[dependencies]` or a `[target.….dependencies]` table, sorted.
/// Development and build dependencies are not counted: they do not ship with the crate.
/// A renamed dependency counts by its `package` name.
pub fn memlens_dependencies(manifest: &str) -> Result<Vec<String>, String> {
    let manifest: toml::Table = manifest.parse().map_err(|e| format!("not TOML: {e}"))?;
    let mut tables = Vec::new();
    if let Some(dependencies) = manifest.get("dependencies") {
        tables.push(dependencies);
    }
    if let Some(targets) = manifest.get("target").and_then(toml::Value::as_table) {
        tables.extend(targets.values().filter_map(|t| t.get("dependencies")));
    }

    let mut names = Vec::new();
    for table in tables.iter().filter_map(|t| t.as_table()) {
        for (key, value) in table {
            let package = value
                .get("package")
                .and_then(toml::Value::as_str)
                .unwrap_or(key);
            if package.starts_with("memlens") {
                names.push(package.to_owned());
            }
        }
    }
    names.sort();
    names.dedup();
    Ok(names)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_plain_renamed_and_target_dependencies_but_not_dev_dependencies() {
        let manifest = r#"
            [package]
            name = "memlens-example"

            [dependencies]
            serde = "1"
            memlens-trace = { path = "../memlens-trace" }
            words = { package = "memlens-vocab", path = "../memlens-vocab" }

            [target.'cfg(unix)'.dependencies]
            memlens-api = { path = "../memlens-api" }

            [dev-dependencies]
            memlens-heap = { path = "../memlens-heap" }
        "#;
        assert_eq!(
            memlens_dependencies(manifest).unwrap(),
            ["memlens-api", "memlens-trace", "memlens-vocab"]
        );
    }
}
