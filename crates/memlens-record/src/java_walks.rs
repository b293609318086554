//! The Java agent's heap-walk options (`memlens record --java --java-heap-walks
//! N|all|none --java-data-structure CLASS`): when the agent walks the heap for the
//! `data-structure` classifier, and which classes are data structures besides the
//! `java.util` collections and maps and object arrays. The CLI flattens [`JavaHeapWalks`]
//! into `memlens record`'s arguments; [`JavaHeapWalks::agent_options`] checks them and
//! writes them in the agent's option string.

use crate::RecordError;

/// The heap-walk options of `memlens record --java`.
#[derive(Debug, Clone, PartialEq, Eq, clap::Args)]
pub struct JavaHeapWalks {
    /// With --java: heap walks for `--by data-structure`: at most N per second of
    /// run time (after a garbage collection) plus one at the end, `all` (after every
    /// collection) or `none`.
    #[arg(
        long = "java-heap-walks",
        value_name = "N|all|none",
        default_value = "1",
        requires = "java"
    )]
    pub walks: String,
    /// With --java: a class whose instances are data structures besides the
    /// java.util collections and maps and object arrays (repeatable), e.g.
    /// com.example.Ring; its nested classes are its internal objects.
    #[arg(long = "java-data-structure", value_name = "CLASS", requires = "java")]
    pub data_structures: Vec<String>,
}

impl Default for JavaHeapWalks {
    fn default() -> JavaHeapWalks {
        JavaHeapWalks {
            walks: "1".into(),
            data_structures: Vec::new(),
        }
    }
}

impl JavaHeapWalks {
    /// The options as the agent reads them (`,heap_walks=…,data_structure=…`).
    ///
    /// # Errors
    /// [`RecordError::JavaHeapWalks`] or [`RecordError::JavaDataStructure`] (usage
    /// errors) for a value the agent would refuse.
    pub fn agent_options(&self) -> Result<String, RecordError> {
        let walks = self.walks.trim();
        if !matches!(walks, "all" | "none") && walks.parse::<u32>().is_err() {
            return Err(RecordError::JavaHeapWalks {
                value: self.walks.clone(),
            });
        }
        let mut options = format!(",heap_walks={walks}");
        for class in &self.data_structures {
            let valid = !class.is_empty()
                && class
                    .chars()
                    .all(|c| c.is_alphanumeric() || matches!(c, '.' | '$' | '_'));
            if !valid {
                return Err(RecordError::JavaDataStructure {
                    class: class.clone(),
                });
            }
            options.push_str(",data_structure=");
            options.push_str(class);
        }
        Ok(options)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_reach_the_agent_and_bad_values_are_usage_errors() {
        let walks = JavaHeapWalks {
            walks: "all".into(),
            data_structures: vec!["com.example.Ring".into(), "a.B$C".into()],
        };
        assert_eq!(
            walks.agent_options().unwrap(),
            ",heap_walks=all,data_structure=com.example.Ring,data_structure=a.B$C"
        );
        assert_eq!(
            JavaHeapWalks::default().agent_options().unwrap(),
            ",heap_walks=1"
        );
        let bad = JavaHeapWalks {
            walks: "often".into(),
            ..JavaHeapWalks::default()
        };
        let e = bad.agent_options().unwrap_err();
        assert!(e.is_usage());
        assert_eq!(
            e.to_string(),
            "--java-heap-walks often: expected a number of walks per second, all or none"
        );
        let bad = JavaHeapWalks {
            data_structures: vec!["a,b".into()],
            ..JavaHeapWalks::default()
        };
        let e = bad.agent_options().unwrap_err();
        assert!(e.is_usage());
        assert_eq!(
            e.to_string(),
            "--java-data-structure a,b: expected a Java class name such as com.example.Ring"
        );
    }
}
