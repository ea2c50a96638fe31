//! Tasks in Redis: the [`TaskStore`] of a fleet. Each task is one hash (`rev`, `doc`: the
//! [`TaskEntry`] as JSON) that expires with the task; every change reads it, applies the same
//! rules as the in-memory store ([`TaskEntry`]) and writes it back only if no one changed it
//! in between (a compare-and-set on `rev`, in a script that also checks the limits), retrying
//! on a conflict. `tasks/get` is answered by any replica; answers and cancellations land in
//! the task's inbox and the owner's replica is woken through its channel (`P:inbox:OWNER`),
//! so they reach the replica that runs the guest wherever they arrived. A task whose owner
//! stopped renewing its lease is settled as failed (by whoever reads it, and by every
//! replica's sweep), and forgets its owner.
//!
//! Store operations per task: create 1 script; `tasks/get` 1 read (+1 write to settle an
//! orphan); `tasks/update` and `tasks/cancel` 1 read, 1 script, 1 publish; the owner's lease
//! 1 read + 1 script per renewal (a third of the lease); each state change 1 read + 1 script.
//! Each replica's sweep reads the lease index once a lease, and only the orphans it names.

use std::time::Duration;

use redis::Script;
use serde_json::{Map, Value};

use super::replica::store_error;
use super::replica::{Fleet, principal_key};
use crate::runtime::sandbox::BoxFuture;
use crate::runtime::tasks::{
    Inbox, Over, TaskChange, TaskEntry, TaskLimits, TaskRecord, TaskStore, TaskStoreError, now_ms,
};

/// Compare-and-set attempts before a change gives up (each conflict means another replica
/// changed the task in between: a handful at most in practice).
const ATTEMPTS: usize = 16;

/// How long an owner waits for its inbox before looking again without a wake-up (a message
/// lost while the store reconnected costs at most this).
const INBOX_POLL: Duration = Duration::from_secs(1);

/// Forgets the tasks past their expiry from the count and output indexes; `last` keeps an
/// index alive until its last task expires (a principal that never comes back leaves nothing).
/// KEYS: task, all, own, out, leases; ARGV[1]: now.
const SWEEP: &str = r"
local function last(key, at)
  local current = redis.call('PEXPIRETIME', key)
  if current == -1 or current < tonumber(at) then redis.call('PEXPIREAT', key, at) end
end
local expired = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', ARGV[1])
for _, id in ipairs(expired) do redis.call('HDEL', KEYS[4], id) end
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', ARGV[1])
";

/// Files task ARGV[2] in the indexes until ARGV[4]; while it runs, under the end of its
/// owner's lease ARGV[9] (`''`: it has ended).
const INDEX: &str = r"
local function index()
  redis.call('PEXPIREAT', KEYS[1], ARGV[4])
  redis.call('ZADD', KEYS[2], ARGV[4], ARGV[2])
  redis.call('ZADD', KEYS[3], ARGV[4], ARGV[2])
  last(KEYS[2], ARGV[4])
  last(KEYS[3], ARGV[4])
  if ARGV[9] == '' then
    redis.call('ZREM', KEYS[5], ARGV[2])
  else
    redis.call('ZADD', KEYS[5], ARGV[9], ARGV[2])
    last(KEYS[5], ARGV[4])
  end
end
";

/// KEYS: task, all, own, out, leases. ARGV: now, id, doc, expires_at, max_tasks, max_own,
/// -, -, lease.
const CREATE: &str = r"
if redis.call('ZCARD', KEYS[2]) >= tonumber(ARGV[5]) then return 'all' end
if redis.call('ZCARD', KEYS[3]) >= tonumber(ARGV[6]) then return 'own' end
redis.call('HSET', KEYS[1], 'rev', 1, 'doc', ARGV[3])
index()
return 'ok'
";

/// KEYS: task, all, own, out, leases. ARGV: now, id, doc, expires_at, rev, bytes (or '' when
/// the kept output does not change), max_out, max_own_out, lease.
const WRITE: &str = r"
local rev = redis.call('HGET', KEYS[1], 'rev')
if not rev then return 'gone' end
if rev ~= ARGV[5] then return 'conflict' end
if ARGV[6] ~= '' then
  local bytes = tonumber(ARGV[6])
  local mine = tonumber(redis.call('HGET', KEYS[4], ARGV[2]) or '0')
  local all = 0
  for _, v in ipairs(redis.call('HVALS', KEYS[4])) do all = all + tonumber(v) end
  local own = 0
  for _, id in ipairs(redis.call('ZRANGE', KEYS[3], 0, -1)) do
    own = own + tonumber(redis.call('HGET', KEYS[4], id) or '0')
  end
  if own - mine + bytes > tonumber(ARGV[8]) then return 'own' end
  if all - mine + bytes > tonumber(ARGV[7]) then return 'all' end
  redis.call('HSET', KEYS[4], ARGV[2], bytes)
end
redis.call('HSET', KEYS[1], 'rev', tonumber(rev) + 1, 'doc', ARGV[3])
index()
if ARGV[6] ~= '' then last(KEYS[4], ARGV[4]) end
return 'ok'
";

/// What a change does with the task it read.
enum Edit<T> {
    /// Nothing to write; answer `T`.
    Keep(T),
    /// Write the edited task (checking the output limits when `bytes` is its new kept
    /// output); answer `T`.
    Write { answer: T, bytes: Option<usize> },
}

/// The fleet's tasks.
pub(crate) struct RedisTasks {
    fleet: Fleet,
    limits: TaskLimits,
    create: Script,
    write: Script,
}

impl RedisTasks {
    pub(crate) fn new(fleet: Fleet, limits: TaskLimits) -> RedisTasks {
        RedisTasks {
            fleet,
            limits,
            create: Script::new(&format!("{SWEEP}{INDEX}{CREATE}")),
            write: Script::new(&format!("{SWEEP}{INDEX}{WRITE}")),
        }
    }

    /// Settles the orphaned tasks (their owner's lease ran out: only those are read), at each
    /// lease, for as long as the process lives: a dead replica's tasks become failed and name
    /// it no more.
    pub(crate) fn sweep_orphans(self: std::sync::Arc<Self>) {
        tokio::spawn(async move {
            let mut tick = tokio::time::interval(self.fleet.lease());
            let leases = self.fleet.key(&["leases"]);
            loop {
                tick.tick().await;
                let mut redis = self.fleet.redis.clone();
                let orphans: Vec<String> = redis::cmd("ZRANGEBYSCORE")
                    .arg(&leases)
                    .arg("-inf")
                    .arg(now_ms())
                    .query_async(&mut redis)
                    .await
                    .unwrap_or_default();
                for id in orphans {
                    let settled = self
                        .update(&id, |entry, now| {
                            Ok(if entry.settle_orphan(now) {
                                tracing::info!(task = %id, "a task's owner stopped: marked failed");
                                Edit::Write { answer: (), bytes: Some(entry.record.state.retained()) }
                            } else {
                                Edit::Keep(())
                            })
                        })
                        .await;
                    if settled == Err(TaskStoreError::NotFound) {
                        // Expired with its lease: nothing left to settle.
                        let _ = redis::cmd("ZREM").arg(&leases).arg(&id).query_async::<()>(&mut redis).await;
                    }
                }
            }
        });
    }

    fn task_key(&self, id: &str) -> String {
        self.fleet.key(&["task", id])
    }

    /// The count, output and lease indexes a task of `principal` is filed in.
    fn index_keys(&self, principal: &str) -> [String; 4] {
        [
            self.fleet.key(&["tasks"]),
            self.fleet.key(&["tasks", &principal_key(principal)]),
            self.fleet.key(&["out"]),
            self.fleet.key(&["leases"]),
        ]
    }

    /// Reads task `id`, lets `edit` decide, writes it back if nothing changed in between.
    async fn update<T>(
        &self,
        id: &str,
        mut edit: impl FnMut(&mut TaskEntry, u64) -> Result<Edit<T>, TaskStoreError>,
    ) -> Result<T, TaskStoreError> {
        let mut redis = self.fleet.redis.clone();
        let key = self.task_key(id);
        for _ in 0..ATTEMPTS {
            let (rev, doc): (Option<String>, Option<String>) = redis::cmd("HMGET")
                .arg(&key)
                .arg("rev")
                .arg("doc")
                .query_async(&mut redis)
                .await
                .map_err(unavailable)?;
            let (Some(rev), Some(doc)) = (rev, doc) else { return Err(TaskStoreError::NotFound) };
            let mut entry: TaskEntry = serde_json::from_str(&doc)
                .map_err(|e| TaskStoreError::Unavailable(format!("task {id} in the store is unreadable: {e}")))?;
            let now = now_ms();
            let (answer, bytes) = match edit(&mut entry, now)? {
                Edit::Keep(answer) => return Ok(answer),
                Edit::Write { answer, bytes } => (answer, bytes),
            };
            let doc = serde_json::to_string(&entry).map_err(|e| TaskStoreError::Unavailable(e.to_string()))?;
            let [all, own, out, leases] = self.index_keys(&entry.record.principal);
            let verdict: String = self
                .write
                .key(&key)
                .key(all)
                .key(own)
                .key(out)
                .key(leases)
                .arg(now)
                .arg(id)
                .arg(doc)
                .arg(entry.record.expires_at())
                .arg(rev)
                .arg(bytes.map(|b| b.to_string()).unwrap_or_default())
                .arg(self.limits.max_output_bytes)
                .arg(self.limits.max_output_bytes_per_principal)
                .arg(lease(&entry.record))
                .invoke_async(&mut redis)
                .await
                .map_err(unavailable)?;
            match verdict.as_str() {
                "ok" => return Ok(answer),
                "conflict" => continue,
                "gone" => return Err(TaskStoreError::NotFound),
                limit => {
                    let over = if limit == "own" { Over::Own } else { Over::All };
                    return Err(self.limits.output_refusal(bytes.unwrap_or_default(), over));
                }
            }
        }
        Err(TaskStoreError::Unavailable(format!("task {id} changed {ATTEMPTS} times while being changed")))
    }

    /// Wakes the replica that runs task `id`.
    async fn wake_owner(&self, id: &str, owner: &str) -> Result<(), TaskStoreError> {
        let mut redis = self.fleet.redis.clone();
        redis::cmd("PUBLISH")
            .arg(self.fleet.key(&["inbox", owner]))
            .arg(id)
            .query_async::<()>(&mut redis)
            .await
            .map_err(unavailable)
    }

    /// The client's edit `then` of a task `principal` sees; the owner woken if it says so.
    async fn for_owner(
        &self,
        id: &str,
        principal: &str,
        mut then: impl FnMut(&mut TaskEntry, u64) -> bool,
    ) -> Result<(), TaskStoreError> {
        let woken = self
            .update(id, |entry, now| {
                if !entry.visible_to(principal, now) {
                    return Err(TaskStoreError::NotFound);
                }
                Ok(if then(entry, now) {
                    Edit::Write { answer: Some(entry.record.owner.clone()), bytes: None }
                } else {
                    Edit::Keep(None)
                })
            })
            .await?;
        match woken {
            Some(owner) => self.wake_owner(id, &owner).await,
            None => Ok(()),
        }
    }
}

/// Where a task stands in the lease index: the end of its owner's lease while it runs, `''`
/// once it has ended (out of the index).
fn lease(record: &TaskRecord) -> String {
    if record.state.is_terminal() { String::new() } else { record.lease_until_ms.to_string() }
}

fn unavailable(error: redis::RedisError) -> TaskStoreError {
    store_error("tasks");
    TaskStoreError::Unavailable(error.to_string())
}

impl TaskStore for RedisTasks {
    fn create(&self, record: TaskRecord) -> BoxFuture<'_, Result<(), TaskStoreError>> {
        Box::pin(async move {
            let mut redis = self.fleet.redis.clone();
            let [all, own, out, leases] = self.index_keys(&record.principal);
            let key = self.task_key(&record.id);
            let (expires, lease) = (record.expires_at(), lease(&record));
            let id = record.id.clone();
            let doc = serde_json::to_string(&TaskEntry::new(record))
                .map_err(|e| TaskStoreError::Unavailable(e.to_string()))?;
            let verdict: String = self
                .create
                .key(key)
                .key(all)
                .key(own)
                .key(out)
                .key(leases)
                .arg(now_ms())
                .arg(id)
                .arg(doc)
                .arg(expires)
                .arg(self.limits.max_tasks)
                .arg(self.limits.max_tasks_per_principal)
                .arg("")
                .arg("")
                .arg(lease)
                .invoke_async(&mut redis)
                .await
                .map_err(unavailable)?;
            match verdict.as_str() {
                "ok" => Ok(()),
                "all" => Err(self.limits.count_refusal(Over::All)),
                _ => Err(self.limits.count_refusal(Over::Own)),
            }
        })
    }

    fn get<'a>(&'a self, id: &'a str, principal: &'a str) -> BoxFuture<'a, Result<TaskRecord, TaskStoreError>> {
        Box::pin(self.update(id, move |entry, now| {
            if !entry.visible_to(principal, now) {
                return Err(TaskStoreError::NotFound);
            }
            Ok(if entry.settle_orphan(now) {
                Edit::Write { answer: entry.record.clone(), bytes: Some(entry.record.state.retained()) }
            } else {
                Edit::Keep(entry.record.clone())
            })
        }))
    }

    fn change<'a>(
        &'a self,
        id: &'a str,
        owner: &'a str,
        change: TaskChange,
    ) -> BoxFuture<'a, Result<(), TaskStoreError>> {
        Box::pin(self.update(id, move |entry, now| {
            if !entry.changeable_by(owner)? {
                return Ok(Edit::Keep(()));
            }
            let bytes = match &change {
                TaskChange::State { state, .. } => Some(state.retained()),
                _ => None,
            };
            entry.apply(change.clone(), now);
            Ok(Edit::Write { answer: (), bytes })
        }))
    }

    fn deliver<'a>(
        &'a self,
        id: &'a str,
        principal: &'a str,
        answers: Map<String, Value>,
    ) -> BoxFuture<'a, Result<(), TaskStoreError>> {
        Box::pin(self.for_owner(id, principal, move |entry, now| entry.deliver(answers.clone(), now)))
    }

    fn cancel<'a>(&'a self, id: &'a str, principal: &'a str) -> BoxFuture<'a, Result<(), TaskStoreError>> {
        Box::pin(self.for_owner(id, principal, |entry, _| entry.cancel()))
    }

    fn next_inbox<'a>(&'a self, id: &'a str, owner: &'a str) -> BoxFuture<'a, Result<Inbox, TaskStoreError>> {
        Box::pin(async move {
            loop {
                // Held across the look, so that a wake-up arriving in between is kept.
                let wake = self.fleet.waiter(id);
                let taken = self
                    .update(id, |entry, _| {
                        Ok(match entry.take_inbox(owner)? {
                            Some(inbox) => Edit::Write { answer: Some(inbox), bytes: None },
                            None => Edit::Keep(None),
                        })
                    })
                    .await?;
                if let Some(inbox) = taken {
                    return Ok(inbox);
                }
                let _ = tokio::time::timeout(INBOX_POLL, wake.notified()).await;
            }
        })
    }
}
