//! The flags of tasks (the 2026-07-28 tasks extension): their deadline, how long results stay,
//! and how many tasks and how much of their output the server and one client hold.

use anyhow::{Result, anyhow};

use super::problems::Problems;
use super::problems::flag_limit;
use crate::runtime::grants::limits;
use crate::runtime::tasks::{TaskLimits, TaskSettings};

/// Most tasks a server may be told to hold: each is a running or finished call in memory.
const MAX_TASKS: usize = 1_000_000;

/// The task settings the flags give, defaults elsewhere; each problem kept in `problems`.
pub(crate) fn task_settings(args: &super::args::ServeArgs, problems: &mut Problems) -> TaskSettings {
    let defaults = TaskSettings::default();
    let mut take_secs = |value, flag| problems.take(flag_limit(value, flag, limits::timeout_from_secs)).flatten();
    let deadline = take_secs(args.task_deadline, "--task-deadline").unwrap_or(defaults.deadline);
    let retention = take_secs(args.task_retention, "--task-retention").unwrap_or(defaults.retention);
    let mut take_count = |value: Option<usize>, flag: &str, default: usize| {
        problems.take(count(value, flag)).flatten().unwrap_or(default)
    };
    let max_tasks = take_count(args.max_tasks, "--max-tasks", defaults.limits.max_tasks);
    let max_tasks_per_principal =
        take_count(args.max_tasks_per_client, "--max-tasks-per-client", defaults.limits.max_tasks_per_principal);
    let mut take_mib = |value, flag, default| {
        problems.take(flag_limit(value, flag, limits::output_from_mib)).flatten().unwrap_or(default)
    };
    let max_output_bytes = take_mib(args.max_task_output, "--max-task-output", defaults.limits.max_output_bytes);
    let max_output_bytes_per_principal = take_mib(
        args.max_task_output_per_client,
        "--max-task-output-per-client",
        defaults.limits.max_output_bytes_per_principal,
    );
    TaskSettings {
        deadline,
        retention,
        limits: TaskLimits { max_tasks, max_tasks_per_principal, max_output_bytes, max_output_bytes_per_principal },
    }
}

/// A count of tasks: 1 to [`MAX_TASKS`].
fn count(value: Option<usize>, flag: &str) -> Result<Option<usize>> {
    match value {
        Some(n) if n == 0 || n > MAX_TASKS => Err(anyhow!("{flag} must be 1 to {MAX_TASKS}, not {n}")),
        other => Ok(other),
    }
}
