//! The modules of one crate as its sources declare them, and what each module's own
//! code names: the facts from which [`ModuleGraph`](crate::ModuleGraph) draws edges.
//!
//! Modules are found by following `mod` declarations from `lib.rs` (or `main.rs`), so a
//! file that no declaration reaches is not part of the tree. Test-only code is left out:
//! any item under `#[cfg(test)]` (or `#[cfg(all(test, …))]`), which covers the
//! `#[cfg(test)] mod tests` blocks and test-only module files. Inline modules
//! (`mod name { … }`) are modules of the tree that belong to the file they are written in.

use std::collections::{BTreeMap, BTreeSet};

use proc_macro2::{TokenStream, TokenTree};
use syn::visit::{self, Visit};
use syn::{Attribute, ImplItem, Item, ItemMod, Meta, UseTree, Visibility};

/// One name a `use` item binds (one leaf of its tree).
#[derive(Debug, Clone)]
pub(crate) struct Import {
    /// The name bound in the module; `None` for a glob (`use a::*`).
    pub name: Option<String>,
    /// The path as written, e.g. `crate::model::HeapModel`; for a glob, the path of the
    /// module whose names it imports.
    pub path: Vec<String>,
    /// Whether the `use` is public to some degree (`pub`, `pub(crate)`, `pub(super)`): a
    /// re-export, which other modules may name.
    pub reexport: bool,
}

/// A module of the tree and what its own code says.
#[derive(Debug, Default)]
pub(crate) struct Module {
    /// `crate` for the root, else the path below it (`raster::overview`).
    pub path: String,
    /// The file it is written in, relative to `src/` (`raster/overview.rs`).
    pub file: String,
    /// The module of that file: itself for a file module, the enclosing file's module
    /// for an inline module.
    pub file_module: usize,
    /// The enclosing module; `None` for the root.
    pub parent: Option<usize>,
    /// The declared child modules by name.
    pub children: BTreeMap<String, usize>,
    /// The names of the items defined here (types, traits, functions, constants, …).
    pub defines: BTreeSet<String>,
    /// Every `use` leaf of the module, including `use` items inside function bodies.
    pub imports: Vec<Import>,
    /// Every path of two or more segments in the module's code (types, expressions,
    /// patterns, macro arguments), without a leading `::`.
    pub paths: Vec<Vec<String>>,
    /// Every identifier the module's code mentions outside its `use` items.
    pub mentioned: BTreeSet<String>,
}

/// All modules of one crate; index 0 is the root.
#[derive(Debug)]
pub(crate) struct ModuleTree {
    pub modules: Vec<Module>,
}

impl ModuleTree {
    /// Parses the crate whose sources are `files` (paths relative to `src/`).
    pub(crate) fn parse(files: &BTreeMap<String, String>) -> Result<ModuleTree, String> {
        let root = ["lib.rs", "main.rs"]
            .into_iter()
            .find(|f| files.contains_key(*f))
            .ok_or("the sources have neither lib.rs nor main.rs")?;
        let mut tree = ModuleTree {
            modules: Vec::new(),
        };
        tree.add_file_module(files, None, "crate", root)?;
        Ok(tree)
    }

    fn add_file_module(
        &mut self,
        files: &BTreeMap<String, String>,
        parent: Option<usize>,
        name: &str,
        file: &str,
    ) -> Result<(), String> {
        let ast = syn::parse_file(&files[file]).map_err(|e| format!("{file}: {e}"))?;
        let module = self.push(parent, name, file, None);
        self.add_items(files, module, &ast.items, &child_dir(file))
    }

    fn push(
        &mut self,
        parent: Option<usize>,
        name: &str,
        file: &str,
        file_module: Option<usize>,
    ) -> usize {
        let index = self.modules.len();
        let path = match parent {
            None => "crate".to_owned(),
            Some(0) => name.to_owned(),
            Some(p) => format!("{}::{name}", self.modules[p].path),
        };
        self.modules.push(Module {
            path,
            file: file.to_owned(),
            file_module: file_module.unwrap_or(index),
            parent,
            ..Module::default()
        });
        if let Some(p) = parent {
            self.modules[p].children.insert(name.to_owned(), index);
        }
        index
    }

    /// Adds the items of `module`, whose child module files live in `child_dir`.
    fn add_items(
        &mut self,
        files: &BTreeMap<String, String>,
        module: usize,
        items: &[Item],
        child_dir: &str,
    ) -> Result<(), String> {
        for item in items {
            if is_test_only(item_attrs(item)) {
                continue;
            }
            match item {
                Item::Mod(declaration) => {
                    let name = declaration.ident.to_string();
                    let file = self.modules[module].file.clone();
                    if let Some((_, content)) = &declaration.content {
                        let file_module = self.modules[module].file_module;
                        let child = self.push(Some(module), &name, &file, Some(file_module));
                        self.add_items(files, child, content, &join(child_dir, &name))?;
                    } else {
                        let child_file = module_file(files, declaration, &file, child_dir)?;
                        self.add_file_module(files, Some(module), &name, &child_file)?;
                    }
                }
                Item::Use(item) if item.leading_colon.is_none() => {
                    let reexport = !matches!(item.vis, Visibility::Inherited);
                    collect_use(
                        &item.tree,
                        &mut Vec::new(),
                        reexport,
                        &mut self.modules[module].imports,
                    );
                }
                Item::Use(_) => {}
                other => {
                    let m = &mut self.modules[module];
                    m.defines.extend(defined_names(other));
                    CodeVisitor { module: m }.visit_item(other);
                }
            }
        }
        Ok(())
    }
}

/// The directory of the child module files of the file module in `file`: the file's own
/// directory for `lib.rs`, `main.rs` and `mod.rs`, else a directory named after the file.
fn child_dir(file: &str) -> String {
    let (dir, name) = file.rsplit_once('/').unwrap_or(("", file));
    let stem = name.strip_suffix(".rs").unwrap_or(name);
    if matches!(stem, "lib" | "main" | "mod") {
        dir.to_owned()
    } else {
        join(dir, stem)
    }
}

fn join(dir: &str, name: &str) -> String {
    if dir.is_empty() {
        name.to_owned()
    } else {
        format!("{dir}/{name}")
    }
}

/// The file of `mod name;` declared in `file`: `#[path = "…"]` relative to the file's
/// directory, else `name.rs` or `name/mod.rs` in `child_dir`.
fn module_file(
    files: &BTreeMap<String, String>,
    declaration: &ItemMod,
    file: &str,
    child_dir: &str,
) -> Result<String, String> {
    let name = declaration.ident.to_string();
    let candidates = match path_attribute(&declaration.attrs) {
        Some(path) => vec![join(file.rsplit_once('/').map_or("", |(d, _)| d), &path)],
        None => vec![
            join(child_dir, &format!("{name}.rs")),
            join(child_dir, &format!("{name}/mod.rs")),
        ],
    };
    candidates
        .iter()
        .find(|c| files.contains_key(*c))
        .cloned()
        .ok_or_else(|| {
            format!(
                "{file}: module `{name}` has no file (looked for {})",
                candidates.join(" and ")
            )
        })
}

fn path_attribute(attrs: &[Attribute]) -> Option<String> {
    attrs.iter().find_map(|a| match &a.meta {
        Meta::NameValue(nv) if nv.path.is_ident("path") => match &nv.value {
            syn::Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Str(s),
                ..
            }) => Some(s.value()),
            _ => None,
        },
        _ => None,
    })
}

/// Whether the attributes make an item exist in test builds only: `#[cfg(test)]` or
/// `#[cfg(all(…, test, …))]`.
fn is_test_only(attrs: &[Attribute]) -> bool {
    attrs.iter().any(|a| match &a.meta {
        Meta::List(list) if list.path.is_ident("cfg") => {
            let condition: String = list.tokens.to_string().split_whitespace().collect();
            condition == "test"
                || condition
                    .strip_prefix("all(")
                    .and_then(|c| c.strip_suffix(')'))
                    .is_some_and(|c| c.split(',').any(|part| part == "test"))
        }
        _ => false,
    })
}

fn item_attrs(item: &Item) -> &[Attribute] {
    match item {
        Item::Const(i) => &i.attrs,
        Item::Enum(i) => &i.attrs,
        Item::ExternCrate(i) => &i.attrs,
        Item::Fn(i) => &i.attrs,
        Item::ForeignMod(i) => &i.attrs,
        Item::Impl(i) => &i.attrs,
        Item::Macro(i) => &i.attrs,
        Item::Mod(i) => &i.attrs,
        Item::Static(i) => &i.attrs,
        Item::Struct(i) => &i.attrs,
        Item::Trait(i) => &i.attrs,
        Item::TraitAlias(i) => &i.attrs,
        Item::Type(i) => &i.attrs,
        Item::Union(i) => &i.attrs,
        Item::Use(i) => &i.attrs,
        _ => &[],
    }
}

fn impl_item_attrs(item: &ImplItem) -> &[Attribute] {
    match item {
        ImplItem::Const(i) => &i.attrs,
        ImplItem::Fn(i) => &i.attrs,
        ImplItem::Type(i) => &i.attrs,
        ImplItem::Macro(i) => &i.attrs,
        _ => &[],
    }
}

/// The names an item defines in its module (none for `impl` blocks).
fn defined_names(item: &Item) -> Vec<String> {
    let name = match item {
        Item::Const(i) => &i.ident,
        Item::Enum(i) => &i.ident,
        Item::Fn(i) => &i.sig.ident,
        Item::Static(i) => &i.ident,
        Item::Struct(i) => &i.ident,
        Item::Trait(i) => &i.ident,
        Item::TraitAlias(i) => &i.ident,
        Item::Type(i) => &i.ident,
        Item::Union(i) => &i.ident,
        Item::Macro(i) => match &i.ident {
            Some(ident) => ident,
            None => return Vec::new(),
        },
        Item::ForeignMod(block) => {
            return block
                .items
                .iter()
                .filter_map(|f| match f {
                    syn::ForeignItem::Fn(f) => Some(f.sig.ident.to_string()),
                    syn::ForeignItem::Static(s) => Some(s.ident.to_string()),
                    syn::ForeignItem::Type(t) => Some(t.ident.to_string()),
                    _ => None,
                })
                .collect();
        }
        _ => return Vec::new(),
    };
    vec![name.to_string()]
}

/// Appends one [`Import`] per leaf of `tree`, whose enclosing segments are `prefix`.
fn collect_use(tree: &UseTree, prefix: &mut Vec<String>, reexport: bool, out: &mut Vec<Import>) {
    match tree {
        UseTree::Path(p) => {
            prefix.push(p.ident.to_string());
            collect_use(&p.tree, prefix, reexport, out);
            prefix.pop();
        }
        UseTree::Name(n) => out.push(leaf(prefix, &n.ident, None, reexport)),
        UseTree::Rename(r) => out.push(leaf(prefix, &r.ident, Some(&r.rename), reexport)),
        UseTree::Glob(_) => out.push(Import {
            name: None,
            path: prefix.clone(),
            reexport,
        }),
        UseTree::Group(g) => {
            for item in &g.items {
                collect_use(item, prefix, reexport, out);
            }
        }
    }
}

/// The import of `prefix::ident as rename`; `ident` may be `self` (the module `prefix`).
fn leaf(
    prefix: &[String],
    ident: &syn::Ident,
    rename: Option<&syn::Ident>,
    reexport: bool,
) -> Import {
    let mut path = prefix.to_vec();
    if ident != "self" {
        path.push(ident.to_string());
    }
    let name = match rename {
        Some(rename) => rename.to_string(),
        None => path.last().cloned().unwrap_or_default(),
    };
    Import {
        name: Some(name),
        path,
        reexport,
    }
}

/// Collects the paths, identifiers and local `use` items of code outside `mod` and
/// `use` items, skipping test-only items.
struct CodeVisitor<'m> {
    module: &'m mut Module,
}

impl<'ast> Visit<'ast> for CodeVisitor<'_> {
    fn visit_item(&mut self, item: &'ast Item) {
        if !is_test_only(item_attrs(item)) {
            visit::visit_item(self, item);
        }
    }

    fn visit_impl_item(&mut self, item: &'ast ImplItem) {
        if !is_test_only(impl_item_attrs(item)) {
            visit::visit_impl_item(self, item);
        }
    }

    fn visit_item_use(&mut self, item: &'ast syn::ItemUse) {
        if item.leading_colon.is_none() {
            collect_use(&item.tree, &mut Vec::new(), false, &mut self.module.imports);
        }
    }

    fn visit_path(&mut self, path: &'ast syn::Path) {
        if path.leading_colon.is_none() && path.segments.len() > 1 {
            let segments = path.segments.iter().map(|s| s.ident.to_string());
            self.module.paths.push(segments.collect());
        }
        visit::visit_path(self, path);
    }

    fn visit_ident(&mut self, ident: &'ast proc_macro2::Ident) {
        self.module.mentioned.insert(ident.to_string());
    }

    fn visit_macro(&mut self, mac: &'ast syn::Macro) {
        visit::visit_macro(self, mac);
        scan_tokens(mac.tokens.clone(), self.module);
    }
}

/// Collects the identifiers and the paths (`a::b::c`, not after a `::`) in the tokens of
/// a macro call or definition, whose arguments `syn` does not parse.
fn scan_tokens(tokens: TokenStream, module: &mut Module) {
    let tokens: Vec<TokenTree> = tokens.into_iter().collect();
    let is_colon =
        |t: Option<&TokenTree>| matches!(t, Some(TokenTree::Punct(p)) if p.as_char() == ':');
    for (i, token) in tokens.iter().enumerate() {
        match token {
            TokenTree::Group(group) => scan_tokens(group.stream(), module),
            TokenTree::Ident(ident) => {
                module.mentioned.insert(ident.to_string());
                let continues_a_path =
                    i >= 2 && is_colon(tokens.get(i - 1)) && is_colon(tokens.get(i - 2));
                if continues_a_path {
                    continue;
                }
                let mut path = vec![ident.to_string()];
                let mut next = i + 1;
                while is_colon(tokens.get(next)) && is_colon(tokens.get(next + 1)) {
                    let Some(TokenTree::Ident(segment)) = tokens.get(next + 2) else {
                        break;
                    };
                    path.push(segment.to_string());
                    next += 3;
                }
                if path.len() > 1 {
                    module.paths.push(path);
                }
            }
            _ => {}
        }
    }
}
