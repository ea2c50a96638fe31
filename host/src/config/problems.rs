//! Every problem of a configuration, collected so that one run reports all of them (a missing
//! directory, an unset variable and an out-of-range limit at once), each naming the flag, or
//! the file, line and key.

use anyhow::{Result, anyhow};
use toml::Spanned;

use super::file::ConfigFile;
use crate::runtime::grants::limits::LimitError;

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

/// A limit from a spanned config value, checked by `check`; the error names file, line and key.
pub(super) fn spanned_limit<T: Copy, L>(
    file: &ConfigFile,
    value: &Option<Spanned<T>>,
    key: &str,
    check: impl Fn(T) -> Result<L, LimitError>,
) -> Result<Option<L>> {
    value.as_ref().map(|v| check(*v.get_ref()).map_err(|e| anyhow!("{}: {key} {e}", file.at(v.span())))).transpose()
}

/// A limit from a flag, checked by `check`; the error names the flag.
pub(super) fn flag_limit<T: Copy, L>(
    value: Option<T>,
    flag: &str,
    check: impl Fn(T) -> Result<L, LimitError>,
) -> Result<Option<L>> {
    value.map(|v| check(v).map_err(|e| anyhow!("{flag} {e}"))).transpose()
}

/// The flag's value over the file's; both are checked, so that both are reported.
pub(super) fn pick<T>(problems: &mut Problems, flag: Result<Option<T>>, key: Result<Option<T>>) -> Option<T> {
    let (flag, key) = (problems.take(flag).flatten(), problems.take(key).flatten());
    flag.or(key)
}
