//! The list of classifiers by command-line name, and parsing of a comma list such as
//! `site,thread` into a [`ClassifierChain`].
//!
//! The names are fixed by the interface contract (DESIGN §7). Parsing needs no model, so
//! the CLI can report a bad `--by` before it reads the trace; binding the chain to a
//! model ([`ClassifierChain::bind`]) builds each classifier's lookup tables.

use super::{Classifier, ClassifierEntry, ClassifierOptions};
use super::{age, call_path, closest_domain_site, closest_user_frame, lifetime, module, site};
use super::{data_structure, site_line, size_class, thread, type_name};
use crate::error::HeapError;
use crate::model::HeapModel;

/// Every classifier, in the order the help text lists them. One line per classifier.
pub static REGISTRY: &[ClassifierEntry] = &[
    site::ENTRY,
    site_line::ENTRY,
    closest_user_frame::ENTRY,
    call_path::ENTRY,
    module::ENTRY,
    thread::ENTRY,
    size_class::ENTRY,
    age::ENTRY,
    lifetime::ENTRY,
    type_name::ENTRY,
    closest_domain_site::ENTRY,
    data_structure::ENTRY,
];

/// An ordered list of classifiers with their options, not yet bound to a model.
#[derive(Debug, Clone)]
pub struct ClassifierChain {
    entries: Vec<&'static ClassifierEntry>,
    options: ClassifierOptions,
}

impl ClassifierChain {
    /// The command-line names, in order.
    pub fn names(&self) -> Vec<&'static str> {
        self.entries.iter().map(|e| e.name).collect()
    }

    /// The registry entries, in order.
    pub fn entries(&self) -> &[&'static ClassifierEntry] {
        &self.entries
    }

    /// The options the classifiers will read.
    pub fn options(&self) -> &ClassifierOptions {
        &self.options
    }

    /// Builds every classifier for `model`: O(stacks + frames) per classifier.
    pub fn bind<'m>(&self, model: &'m HeapModel) -> Vec<Box<dyn Classifier + 'm>> {
        self.entries
            .iter()
            .map(|e| (e.build)(model, &self.options))
            .collect()
    }
}

/// Parses a comma list of classifier names (spaces around names are ignored).
///
/// An unknown name gives [`HeapError::UnknownClassifier`], whose message lists the valid
/// names; an empty list gives [`HeapError::NoClassifiers`]; `closest-domain-site`
/// without a domain prefix gives [`HeapError::MissingDomainPrefix`].
pub fn parse_classifiers(
    list: &str,
    options: ClassifierOptions,
) -> Result<ClassifierChain, HeapError> {
    let mut entries = Vec::new();
    for name in list.split(',').map(str::trim).filter(|n| !n.is_empty()) {
        let entry = REGISTRY.iter().find(|e| e.name == name).ok_or_else(|| {
            HeapError::UnknownClassifier {
                name: name.to_owned(),
                valid: REGISTRY.iter().map(|e| e.name).collect(),
            }
        })?;
        if entry.name == closest_domain_site::ENTRY.name && options.domain_prefixes.is_empty() {
            return Err(HeapError::MissingDomainPrefix);
        }
        entries.push(entry);
    }
    if entries.is_empty() {
        return Err(HeapError::NoClassifiers);
    }
    Ok(ClassifierChain { entries, options })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_a_comma_list_in_order() {
        let chain =
            parse_classifiers("site, thread,size-class", ClassifierOptions::default()).unwrap();
        assert_eq!(chain.names(), vec!["site", "thread", "size-class"]);
    }

    #[test]
    fn every_contract_name_is_registered() {
        let names: Vec<&str> = REGISTRY.iter().map(|e| e.name).collect();
        assert_eq!(
            names,
            vec![
                "site",
                "site-line",
                "closest-user-frame",
                "call-path",
                "module",
                "thread",
                "size-class",
                "age",
                "lifetime",
                "type",
                "closest-domain-site",
                "data-structure"
            ]
        );
    }

    #[test]
    fn unknown_name_lists_valid_choices() {
        let err = parse_classifiers("site,sight", ClassifierOptions::default()).unwrap_err();
        assert!(matches!(&err, HeapError::UnknownClassifier { name, .. } if name == "sight"));
        let message = err.to_string();
        assert!(message.contains("unknown classifier `sight`"), "{message}");
        for entry in REGISTRY {
            assert!(
                message.contains(entry.name),
                "{message} lacks {}",
                entry.name
            );
        }
    }

    #[test]
    fn empty_list_and_missing_domain_are_errors() {
        assert_eq!(
            parse_classifiers(" , ", ClassifierOptions::default()).unwrap_err(),
            HeapError::NoClassifiers
        );
        assert_eq!(
            parse_classifiers("closest-domain-site", ClassifierOptions::default()).unwrap_err(),
            HeapError::MissingDomainPrefix
        );
        let options = ClassifierOptions {
            domain_prefixes: vec!["app::".into()],
            ..Default::default()
        };
        assert!(parse_classifiers("closest-domain-site", options).is_ok());
    }
}
