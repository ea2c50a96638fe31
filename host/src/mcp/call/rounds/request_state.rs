//! Sealed `requestState` (2026-07-28 basic §Multi round-trip requests; issue 14, item 2). When
//! a call stops to ask the client, the server may hand back a `requestState` the client echoes
//! on the retry; the spec says to treat it as attacker-controlled and integrity-protect it.
//! mcpbox carries in it what the retry needs (the answers so far) and binds it to its request:
//! an expiry, a digest of the method and its salient parameters, and the principal that made
//! it (with `[auth]`; `null` without). It is sealed with AES-256-GCM (`ring`, which rustls already
//! brings): tampered, expired, foreign or mismatched state is refused and nothing runs.
//!
//! Keys come from the operator (`--request-state-keys FILE`: one base64 32-byte key a line;
//! the first seals, all open, so keys rotate by adding a new first line and dropping the old
//! one later); without one, a key is generated per process, with a warning that retries then
//! only work on the same process.
//!
//! The format: base64url(key id (4 bytes) ‖ nonce (12) ‖ AES-256-GCM(JSON payload) ‖ tag (16)),
//! the payload `{"v":1,"exp":ms,"req":"sha256 hex","principal":null,"answers":{...},
//! "saved":"base64"}` (`saved`: the state the plugin kept with `save-state`, at most 64 KiB,
//! absent when none), at most [`MAX_STATE_BYTES`] sealed. An empty round trip (no answers, no
//! state) seals to 164 characters.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::path::Path;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use anyhow::{Context, Result, bail};
use base64::Engine as _;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use ring::aead::{AES_256_GCM, Aad, LessSafeKey, NONCE_LEN, Nonce, UnboundKey};
use ring::rand::{SecureRandom, SystemRandom};
use rmcp::ErrorData as McpError;
use rmcp::model::InputResponses;
use rmcp::service::{RequestContext, RoleServer};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::mcp::call::compose::Recorded;
use crate::mcp::wire::era::Era;

/// The largest `requestState` mcpbox hands out or accepts, in bytes (base64 text).
pub(crate) const MAX_STATE_BYTES: usize = 256 * 1024;
/// Bound into every seal, so that no other use of these keys can produce a valid state.
const AAD: &[u8] = b"mcpbox requestState v1";
const KEY_ID_LEN: usize = 4;

/// One round of a 2026-07-28 request that may take several (`tools/call`, `prompts/get`,
/// `resources/read`): which request it is, and what the client sent back.
pub(crate) struct Round {
    /// [`request_digest`] of the request.
    digest: String,
    state: Option<String>,
    responses: Option<InputResponses>,
    /// Who makes the request ([`Principal::key`](crate::access::Principal::key)), with
    /// `[auth]`: a state sealed for one principal does not open for another.
    pub(crate) principal: Option<String>,
    /// Where mcpbox's own approval of this call stands (`approval.rs`), sealed with the state.
    pub(crate) approval: Option<Approval>,
}

/// mcpbox's own approval question of a call, as its sealed state records it: only a state
/// mcpbox sealed after asking lets the client's answer count, and one sealed after the answer
/// carries the approval through the call's later rounds (the plugin's own questions).
/// Both carry the question's id, which a finished call uses up: "allow once" runs the call
/// once, however often its state is replayed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "step", rename_all = "lowercase")]
pub(crate) enum Approval {
    /// Asked; the answer comes with the next round.
    Asked { id: String },
    /// Given for this call.
    Granted { id: String },
}

impl Round {
    /// The round of a request in `context`'s era: `None` in a legacy session, where questions
    /// are server-to-client requests and no state travels (nor is anything digested).
    pub(crate) fn of(
        context: &RequestContext<RoleServer>,
        method: &str,
        target: &str,
        arguments: &impl Serialize,
        state: Option<String>,
        responses: Option<InputResponses>,
    ) -> Option<Round> {
        Era::of(context).is_modern().then(|| {
            let arguments = serde_json::to_string(arguments).unwrap_or_default();
            Round::new(method, target, &arguments, state, responses)
        })
    }

    /// The client's new answer to the question `key`, if any.
    pub(crate) fn new_answer(&self, key: &str) -> Option<&serde_json::Value> {
        self.responses.as_ref()?.get(key)
    }

    /// Whether the client's new answers say `action` to the question `key`.
    pub(crate) fn answered(&self, key: &str, action: &str) -> bool {
        self.responses
            .as_ref()
            .and_then(|responses| responses.get(key))
            .is_some_and(|answer| answer["action"] == action)
    }

    /// A round of `method` on `target` with `arguments` (canonical JSON text), with the
    /// client's `requestState` and `inputResponses`.
    fn new(
        method: &str,
        target: &str,
        arguments: &str,
        state: Option<String>,
        responses: Option<InputResponses>,
    ) -> Round {
        Round { digest: request_digest(method, target, arguments), state, responses, principal: None, approval: None }
    }
}

/// What a `requestState` carries.
#[derive(Debug, Serialize, Deserialize)]
struct Payload<'a> {
    v: u8,
    /// Expiry, milliseconds since the Unix epoch.
    exp: u64,
    /// [`request_digest`] of the request it belongs to.
    req: String,
    /// Who made the request, with `[auth]`.
    principal: Option<String>,
    /// The client's answers so far, by question key.
    answers: Cow<'a, InputResponses>,
    /// The plugin's state for the next round, base64.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    saved: Option<String>,
    /// mcpbox's own approval of the call, when it needs one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    approval: Option<Approval>,
    /// The inner calls (`host.call-tool`) this request's rounds completed, never run again.
    #[serde(default, skip_serializing_if = "<[_]>::is_empty")]
    calls: Cow<'a, [Recorded]>,
    /// What each question key was asked ([`Asked`]).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    asked: Cow<'a, Asked>,
}

/// The question each key was asked, as a digest of what the client saw (its method and
/// params): an answer counts only for the question it answered (round four, 19: a composer's
/// harmless question under a key its callee later asks for a confirmation must not lend its
/// "yes" to that confirmation).
pub(crate) type Asked = BTreeMap<String, String>;

/// The digest of a question as the client sees it (an entry of `inputRequests`).
pub(crate) fn question_digest(request: &impl Serialize) -> String {
    let text = serde_json::to_string(request).unwrap_or_default();
    crate::hex::hex(&Sha256::digest(text.as_bytes()))
}

/// What a round's `requestState` and `inputResponses` give the call.
#[derive(Debug, Default, PartialEq)]
pub(crate) struct Carried {
    /// Every answer so far, by question key.
    pub(crate) answers: InputResponses,
    /// The state the plugin kept in the previous round.
    pub(crate) saved: Option<Vec<u8>>,
    /// Where mcpbox's own approval of the call stood.
    pub(crate) approval: Option<Approval>,
    /// The inner calls completed in earlier rounds.
    pub(crate) calls: Vec<Recorded>,
    /// What the answers' questions were.
    pub(crate) asked: Asked,
}

/// The keys that seal and open `requestState`.
pub(crate) struct StateKeys {
    /// (id, key); the first seals.
    keys: Vec<([u8; KEY_ID_LEN], LessSafeKey)>,
    ttl: Duration,
    random: SystemRandom,
}

impl StateKeys {
    /// The keys in `file` (one base64 32-byte key a line, `#` comments), or one generated now.
    pub(crate) fn load(file: Option<&Path>, ttl: Duration) -> Result<StateKeys> {
        let random = SystemRandom::new();
        let raw: Vec<Vec<u8>> = match file {
            Some(path) => {
                let text = std::fs::read_to_string(path)
                    .with_context(|| format!("cannot read the request state keys {}", path.display()))?;
                let mut keys = Vec::new();
                for (number, line) in text.lines().enumerate() {
                    let line = line.trim();
                    if line.is_empty() || line.starts_with('#') {
                        continue;
                    }
                    let key = STANDARD.decode(line).ok().filter(|k| k.len() == 32);
                    let Some(key) = key else {
                        bail!(
                            "{}:{}: a request state key is 32 bytes in base64 (`openssl rand -base64 32`)",
                            path.display(),
                            number + 1
                        );
                    };
                    keys.push(key);
                }
                if keys.is_empty() {
                    bail!("{} holds no request state key", path.display());
                }
                keys
            }
            None => {
                tracing::warn!(
                    "no --request-state-keys: multi round-trip state is sealed with a key made for this process, \
                     so a retry works only on this process (give every replica the same key file)"
                );
                let mut key = vec![0u8; 32];
                random.fill(&mut key).map_err(|_| anyhow::anyhow!("cannot generate a request state key"))?;
                vec![key]
            }
        };
        let keys = raw
            .iter()
            .map(|bytes| {
                let mut id = [0u8; KEY_ID_LEN];
                id.copy_from_slice(&Sha256::digest(bytes)[..KEY_ID_LEN]);
                let key = UnboundKey::new(&AES_256_GCM, bytes).map_err(|_| anyhow::anyhow!("invalid key"))?;
                Ok((id, LessSafeKey::new(key)))
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(StateKeys { keys, ttl, random })
    }

    /// `answers` (to the questions `asked`), the plugin's `saved` state and the inner `calls`
    /// completed so far, sealed for `round`'s request.
    pub(crate) fn seal(
        &self,
        round: &Round,
        answers: &InputResponses,
        asked: &Asked,
        saved: Option<&[u8]>,
        calls: &[Recorded],
    ) -> Result<String, McpError> {
        let payload = Payload {
            v: 1,
            exp: now_ms().saturating_add(self.ttl.as_millis() as u64),
            req: round.digest.clone(),
            principal: round.principal.clone(),
            answers: Cow::Borrowed(answers),
            saved: saved.map(|bytes| STANDARD.encode(bytes)),
            approval: round.approval.clone(),
            calls: Cow::Borrowed(calls),
            asked: Cow::Borrowed(asked),
        };
        let mut sealed = serde_json::to_vec(&payload)
            .map_err(|e| McpError::internal_error(format!("cannot encode the request state: {e}"), None))?;
        let (id, key) = &self.keys[0];
        let mut nonce = [0u8; NONCE_LEN];
        self.random.fill(&mut nonce).map_err(|_| McpError::internal_error("cannot make a nonce", None))?;
        key.seal_in_place_append_tag(Nonce::assume_unique_for_key(nonce), Aad::from(AAD), &mut sealed)
            .map_err(|_| McpError::internal_error("cannot seal the request state", None))?;
        let mut token = Vec::with_capacity(KEY_ID_LEN + NONCE_LEN + sealed.len());
        token.extend_from_slice(id);
        token.extend_from_slice(&nonce);
        token.extend_from_slice(&sealed);
        let text = URL_SAFE_NO_PAD.encode(token);
        if text.len() > MAX_STATE_BYTES {
            return Err(McpError::internal_error(
                format!(
                    "the answers so far, the plugin's saved state and the results of the tools it \
                     called take {} bytes sealed, over the {MAX_STATE_BYTES} a request state may carry",
                    text.len()
                ),
                None,
            ));
        }
        Ok(text)
    }

    /// The answers a `requestState` carries, if it is one of ours, unexpired, and for the
    /// request whose digest is `request`; otherwise the JSON-RPC error that refuses the request.
    fn open(&self, text: &str, request: &str, principal: Option<&str>) -> Result<Carried, McpError> {
        let refuse = |why: &str| {
            McpError::invalid_params(format!("invalid requestState: {why}; repeat the request without it"), None)
        };
        if text.len() > MAX_STATE_BYTES {
            return Err(refuse("too large"));
        }
        let mut token = URL_SAFE_NO_PAD.decode(text).map_err(|_| refuse("not one this server issued"))?;
        if token.len() < KEY_ID_LEN + NONCE_LEN {
            return Err(refuse("not one this server issued"));
        }
        let (head, sealed) = token.split_at_mut(KEY_ID_LEN + NONCE_LEN);
        let (id, nonce) = head.split_at(KEY_ID_LEN);
        let key = self
            .keys
            .iter()
            .find(|(k, _)| k == id)
            .map(|(_, key)| key)
            .ok_or_else(|| refuse("not sealed with a key this server holds"))?;
        let nonce = Nonce::try_assume_unique_for_key(nonce).map_err(|_| refuse("not one this server issued"))?;
        let plain = key.open_in_place(nonce, Aad::from(AAD), sealed).map_err(|_| refuse("it was altered"))?;
        let payload: Payload = serde_json::from_slice(plain).map_err(|_| refuse("not one this server issued"))?;
        if payload.exp < now_ms() && !crate::switched_off!("request-state.expires") {
            return Err(refuse("it expired"));
        }
        if payload.req != request && !crate::switched_off!("request-state.bound-to-request") {
            return Err(refuse("it belongs to another request"));
        }
        if payload.principal.as_deref() != principal {
            return Err(refuse("it belongs to another principal"));
        }
        let saved = payload
            .saved
            .map(|text| STANDARD.decode(text))
            .transpose()
            .map_err(|_| refuse("not one this server issued"))?;
        Ok(Carried {
            answers: payload.answers.into_owned(),
            saved,
            approval: payload.approval,
            calls: payload.calls.into_owned(),
            asked: payload.asked.into_owned(),
        })
    }

    /// Where the approval of `round`'s call stands in the state it came with (opened, so a
    /// state that does not open is the JSON-RPC error); `None` without a state.
    pub(crate) fn approval(&self, round: &Round) -> Result<Option<Approval>, McpError> {
        match &round.state {
            Some(text) => Ok(self.open(text, &round.digest, round.principal.as_deref())?.approval),
            None => Ok(None),
        }
    }

    /// What `round` carries: the answers its state holds and the client's new ones (an answer
    /// already given stays as it was), and the plugin's saved state.
    pub(crate) fn carried(&self, round: &mut Round) -> Result<Carried, McpError> {
        let mut carried = match &round.state {
            Some(text) => self.open(text, &round.digest, round.principal.as_deref())?,
            None => Carried::default(),
        };
        for (key, answer) in round.responses.take().unwrap_or_default() {
            carried.answers.entry(key).or_insert(answer);
        }
        Ok(carried)
    }
}

fn now_ms() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_millis() as u64)
}

/// A digest of a request's method and the parameters that make it the same request (the tool,
/// prompt or resource, and its arguments as canonical JSON text: serde_json's maps are sorted).
fn request_digest(method: &str, target: &str, arguments: &str) -> String {
    let mut hasher = Sha256::new();
    for part in [method, target, arguments] {
        hasher.update((part.len() as u64).to_be_bytes());
        hasher.update(part.as_bytes());
    }
    crate::hex::hex(&hasher.finalize())
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;

    fn keys() -> StateKeys {
        StateKeys::load(None, Duration::from_secs(600)).unwrap()
    }

    fn round(arguments: &Value) -> Round {
        Round::new("tools/call", "x.t", &arguments.to_string(), None, None)
    }

    #[test]
    fn sealed_state_opens_only_unaltered_for_its_request() {
        let keys = keys();
        let request = round(&json!({ "a": 1 }));
        let answers: InputResponses = [("elicitation-0".to_owned(), json!({ "action": "accept" }))].into();
        let asked: Asked = [("elicitation-0".to_owned(), "d1".to_owned())].into();
        let state = keys.seal(&request, &answers, &asked, Some(b"step 1 done"), &[]).unwrap();
        let carried = keys.open(&state, &request.digest, None).unwrap();
        assert_eq!(
            carried,
            Carried {
                answers: answers.clone(),
                saved: Some(b"step 1 done".to_vec()),
                approval: None,
                calls: Vec::new(),
                asked,
            }
        );
        let other = round(&json!({ "a": 2 }));
        assert!(keys.open(&state, &other.digest, None).unwrap_err().message.contains("another request"));
        let mut bytes = URL_SAFE_NO_PAD.decode(&state).unwrap();
        let last = bytes.len() - 1;
        bytes[last] ^= 1;
        assert!(
            keys.open(&URL_SAFE_NO_PAD.encode(bytes), &request.digest, None).unwrap_err().message.contains("altered")
        );
        let stranger = StateKeys::load(None, Duration::from_secs(600)).unwrap();
        assert!(stranger.open(&state, &request.digest, None).unwrap_err().message.contains("key"));
        let expired = StateKeys { ttl: Duration::ZERO, ..keys };
        let state = expired.seal(&request, &answers, &Asked::new(), None, &[]).unwrap();
        std::thread::sleep(Duration::from_millis(2));
        assert!(expired.open(&state, &request.digest, None).unwrap_err().message.contains("expired"));
    }

    #[test]
    fn a_state_sealed_for_one_principal_does_not_open_for_another() {
        let keys = keys();
        let mut request = round(&json!({}));
        request.principal = Some("[\"https://id\",\"ada\"]".into());
        let state = keys.seal(&request, &InputResponses::new(), &Asked::new(), None, &[]).unwrap();
        assert!(keys.open(&state, &request.digest, request.principal.as_deref()).is_ok());
        let bob = Some("[\"https://id\",\"bob\"]");
        assert!(keys.open(&state, &request.digest, bob).unwrap_err().message.contains("another principal"));
        assert!(keys.open(&state, &request.digest, None).unwrap_err().message.contains("another principal"));
    }

    #[test]
    fn digests_ignore_member_order() {
        let a: Value = serde_json::from_str(r#"{"b":1,"a":{"y":2,"x":3}}"#).unwrap();
        let b: Value = serde_json::from_str(r#"{"a":{"x":3,"y":2},"b":1}"#).unwrap();
        assert_eq!(round(&a).digest, round(&b).digest);
        assert_ne!(round(&a).digest, Round::new("tools/call", "x.u", &a.to_string(), None, None).digest);
    }
}
