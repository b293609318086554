//! A program launch described as data: the program, its arguments and the changes
//! to the environment it inherits from memlens. The recorders build one with pure
//! functions (so a test can read what the program would get), then run it.

use std::ffi::{OsStr, OsString};
use std::path::Path;
use std::process::Command;

use crate::RecordError;
use crate::program::{exit_code, leave_signals_to_the_program};

/// What to start, and how its environment differs from memlens's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Launch {
    /// The program as given (a path, or a name searched on `PATH`).
    pub program: OsString,
    /// Its arguments.
    pub args: Vec<OsString>,
    /// Variables set (`Some`) or removed (`None`), in order; the last change of a
    /// variable wins.
    pub env: Vec<(OsString, Option<OsString>)>,
}

impl Launch {
    /// Starts `program` with no arguments and memlens's environment.
    pub fn new(program: impl Into<OsString>) -> Launch {
        Launch {
            program: program.into(),
            args: Vec::new(),
            env: Vec::new(),
        }
    }

    /// Sets `variable` to `value`.
    pub fn set(&mut self, variable: &str, value: impl Into<OsString>) {
        self.env.push((variable.into(), Some(value.into())));
    }

    /// Removes `variable` from what the program inherits.
    pub fn remove(&mut self, variable: &str) {
        self.env.push((variable.into(), None));
    }

    /// The last change of `variable`: `Some(Some(value))` set, `Some(None)` removed,
    /// `None` inherited as it is.
    #[cfg(test)]
    pub fn change(&self, variable: &str) -> Option<Option<&OsStr>> {
        (self.env.iter().rev())
            .find(|(name, _)| name == variable)
            .map(|(_, value)| value.as_deref())
    }

    /// The command that starts it.
    fn command(&self) -> Command {
        let mut command = Command::new(&self.program);
        command.args(&self.args);
        for (variable, value) in &self.env {
            match value {
                Some(value) => command.env(variable, value),
                None => command.env_remove(variable),
            };
        }
        command
    }

    /// Runs the program to its end, memlens ignoring Ctrl-C meanwhile; returns its
    /// exit code.
    ///
    /// # Errors
    ///
    /// [`RecordError::Start`] when it cannot start.
    pub fn run(&self) -> Result<i32, RecordError> {
        let mut command = self.command();
        leave_signals_to_the_program();
        let status = command.status().map_err(|source| RecordError::Start {
            program: Path::new(&self.program).to_path_buf(),
            source,
        })?;
        Ok(exit_code(status))
    }
}

/// `ours` before what memlens inherited in `variable` (a space-separated list such
/// as `LD_PRELOAD` or `JAVA_TOOL_OPTIONS`), so the program keeps both.
pub(crate) fn prepend(ours: &OsStr, inherited: Option<OsString>) -> OsString {
    let mut list = ours.to_os_string();
    if let Some(inherited) = inherited.filter(|v| !v.is_empty()) {
        list.push(" ");
        list.push(inherited);
    }
    list
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_last_change_of_a_variable_wins() {
        let mut launch = Launch::new("prog");
        launch.set("A", "1");
        launch.remove("A");
        launch.set("B", "2");
        assert_eq!(launch.change("A"), Some(None));
        assert_eq!(launch.change("B"), Some(Some(OsStr::new("2"))));
        assert_eq!(launch.change("C"), None);
    }

    #[test]
    fn ours_goes_before_the_inherited_list() {
        let ours = OsStr::new("/lib/ours.so");
        assert_eq!(prepend(ours, None), "/lib/ours.so");
        assert_eq!(prepend(ours, Some("".into())), "/lib/ours.so");
        assert_eq!(
            prepend(ours, Some("/lib/theirs.so".into())),
            "/lib/ours.so /lib/theirs.so"
        );
    }

    #[test]
    fn the_command_has_the_arguments_and_the_changes() {
        let mut launch = Launch::new("sh");
        launch.args = vec!["-c".into(), "true".into()];
        launch.set("A", "1");
        launch.remove("B");
        let command = launch.command();
        assert_eq!(command.get_program(), "sh");
        assert_eq!(command.get_args().collect::<Vec<_>>(), ["-c", "true"]);
        let envs: Vec<_> = command.get_envs().collect();
        assert_eq!(
            envs,
            [
                (OsStr::new("A"), Some(OsStr::new("1"))),
                (OsStr::new("B"), None)
            ]
        );
    }
}
