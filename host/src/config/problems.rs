//! Every problem of a configuration, collected so that one run reports all of them (a missing
//! directory, an unset variable and an out-of-range limit at once), each naming the flag, or
//! the file, line and key.

use anyhow::{Result, anyhow};

/// The problems found so far.
#[derive(Debug, Default)]
pub(crate) struct Problems(Vec<String>);

impl Problems {
    /// The value of `result`, or `None` with its error kept.
    pub(crate) fn take<T>(&mut self, result: Result<T>) -> Option<T> {
        match result {
            Ok(value) => Some(value),
            Err(error) => {
                self.0.push(format!("{error:#}"));
                None
            }
        }
    }

    /// Nothing wrong, or one error listing every problem, one a line.
    pub(crate) fn finish(self) -> Result<()> {
        match self.0.as_slice() {
            [] => Ok(()),
            [one] => Err(anyhow!("{one}")),
            many => Err(anyhow!("{} problems in the configuration:\n  {}", many.len(), many.join("\n  "))),
        }
    }
}
