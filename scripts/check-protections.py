#!/usr/bin/env python3
"""Proves the hostile-plugin tests guard their protections: for each protection, switch it off
in the host's source (one textual mutation), run the tests that guard it, expect them to FAIL,
and restore the source. Prints a table; exits non-zero if any test passed with its protection
off. Takes a few minutes (one incremental host build per protection). The test command
(scripts/test.sh) runs it, so a protection moved or renamed without this list fails CI.

    scripts/check-protections.py            # all
    scripts/check-protections.py memory     # those whose name contains "memory"

Needs a clean host/src (it edits files in place and restores them from memory)."""

import pathlib
import subprocess
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent

# (protection, [(file, original, mutated), ...], test filters)
SANDBOX = "host/src/runtime/sandbox"
TRANSPORT = "host/src/mcp/transport"
MUTATIONS = [
    ("deadline (epoch check and host-wait timer)",
     [(f"{SANDBOX}/store.rs", "if Instant::now() >= state.deadline {", "if false {"),
      (f"{SANDBOX}/mod.rs",
       "() = tokio::time::sleep_until(deadline.into()) => Err(Some(Interrupt::Deadline.into())),",
       "() = std::future::pending::<()>() => Err(Some(Interrupt::Deadline.into())),")],
     ["sandbox::an_endless_loop_hits_the_deadline_while_other_calls_proceed"]),
    ("an instance made ahead gets exactly its call's grants, deadline and budget",
     [(f"{SANDBOX}/store.rs", "*store.data_mut() = state;", "drop(state);")],
     ["sandbox::an_instance_made_ahead_serves_one_call_and_sees_only_that_calls_roots"]),
    ("calls run in instances made ahead",
     [(f"{SANDBOX}/prepared.rs", "stopped: AtomicBool::new(target == 0),", "stopped: AtomicBool::new(true),")],
     ["sandbox::an_instance_made_ahead_serves_one_call_and_sees_only_that_calls_roots"]),
    ("memory limit",
     [(f"{SANDBOX}/state.rs", "if desired > self.limit {", "if false {")],
     ["hostile::memory_grow_to_the_maximum_at_once_is_refused", "sandbox::one_huge_allocation_hits_the_memory_limit"]),
    ("output limit (result)",
     [("host/src/runtime/plugin.rs", "if charged.is_err() {", "if false {")],
     ["sandbox::a_huge_result_hits_the_output_limit"]),
    ("output limit (every byte charged)",
     [("host/src/runtime/budget.rs", "self.used = self.used.saturating_add(bytes).saturating_add(ENVELOPE);",
       "self.used = self.used.saturating_add(ENVELOPE);")],
     ["budget::every_field_of_a_result_counts", "budget::json_escaping_counts"]),
    ("output measured as JSON on the wire (every field, escaping)",
     [("host/src/runtime/budget.rs", "Ok(()) => counter.0,", "Ok(()) => counter.0.min(64),")],
     ["budget::every_field_of_a_result_counts", "budget::json_escaping_counts"]),
    ("questions to the client capped per call",
     [("host/src/runtime/budget.rs", "Emission::ClientRequest => MAX_CLIENT_REQUESTS_PER_CALL,",
       "Emission::ClientRequest => usize::MAX,")],
     ["budget::questions_to_the_client_are_capped_per_call"]),
    ("host.log shares the guest stderr budget",
     [(f"{SANDBOX}/host_api.rs", "if self.stderr.take_log_budget(bytes) {", "if true {")],
     ["budget::logs_through_the_host_share_the_stderr_budget"]),
    ("structured content checked against the output schema",
     [("host/src/runtime/plugin.rs", "        if result.is_error {\n            return None;", "        if true {\n            return None;")],
     ["descriptors::structured_content_must_match_the_output_schema"]),
    ("legacy clients get structured content as an object only",
     [("host/src/mcp/convert.rs", "if value.is_object() || dialect.any_structured_content {", "if true {")],
     ["descriptors::a_legacy_client_gets_non_object_structured_content_as_text"]),
    ("compile time bounded (the compiling process killed)",
     [("host/src/runtime/compile.rs", "Ok(None) if started.elapsed() >= timeout => {", "Ok(None) if false => {")],
     ["compile_bounds::a_compilation_over_the_time_limit_is_stopped_and_the_others_serve"]),
    ("a compilation stops when mcpbox dies",
     [("host/src/runtime/compile.rs", "std::process::exit(3);", "std::thread::park();")],
     ["compile_bounds::a_compilation_stops_when_mcpbox_dies"]),
    ("plugin file size bounded",
     [("host/src/runtime/compile.rs", "if size > max {", "if false {"),
      ("host/src/runtime/compile.rs", "if bytes.len() as u64 > max {", "if false {")],
     ["compile_bounds::a_file_over_the_size_limit_is_refused_and_the_others_serve"]),
    ("IPv4 special-purpose blocks refused (IANA registry)",
     [("host/src/runtime/special_purpose.rs", "let block = most_specific(&registries().v4, u128::from(u32::from(ip)), 32)?;",
       "let block = most_specific(&[], u128::from(u32::from(ip)), 32)?;")],
     ["network::every_special_purpose_address_is_refused_when_a_name_resolves_to_it",
      "network::only_allow_listed_public_addresses_are_reached"]),
    ("IPv6 special-purpose blocks refused (IANA registry)",
     [("host/src/runtime/special_purpose.rs", "        if !block.reachable {\n            let embedded", "        if false {\n            let embedded")],
     ["network::every_special_purpose_address_is_refused_when_a_name_resolves_to_it"]),
    ("embedded IPv4 decoded (ISATAP)",
     [("host/src/runtime/special_purpose.rs", "if (segments[4] & 0xfdff) == 0 && segments[5] == 0x5efe {", "if false {")],
     ["network::every_special_purpose_address_is_refused_when_a_name_resolves_to_it"]),
    ("a question key is used once per call",
     [("host/src/mcp/client.rs", "if !self.used.lock().unwrap_or_else(PoisonError::into_inner).insert(key.clone()) {",
       "if { self.used.lock().unwrap_or_else(PoisonError::into_inner).insert(key.clone()); false } {")],
     ["rounds::the_rules_of_asking_fail_the_call_or_refuse_the_ask"]),
    ("the roots question key is the host's",
     [("host/src/mcp/client.rs", "if key == ROOTS_QUESTION && question.method != ClientMethod::ListRoots {", "if false {")],
     ["rounds::the_rules_of_asking_fail_the_call_or_refuse_the_ask"]),
    ("a plugin's saved state is capped",
     [(f"{SANDBOX}/host_api.rs", "if state.len() > MAX_SAVED_STATE_BYTES {", "if false {")],
     ["rounds::the_rules_of_asking_fail_the_call_or_refuse_the_ask"]),
    ("an answer must fit the question it answers",
     [("host/src/mcp/client.rs", ".filter(|answer| fits(question.method, answer))", "")],
     ["rounds::plugins_choose_their_keys_and_ask_several_questions_in_one_round"]),
    ("requestState bound to its request",
     [("host/src/mcp/request_state.rs", "if payload.req != request {", "if false {")],
     ["request_state::the_state_carries_earlier_answers_and_is_refused_when_forged"]),
    ("requestState expires",
     [("host/src/mcp/request_state.rs", "if payload.exp < now_ms() {", "if false {")],
     ["request_state::replicas_sharing_keys_continue_each_others_requests_and_old_states_expire"]),
    ("memory from large results returned (fixed mmap threshold)",
     [("host/src/main.rs", "if cfg!(target_os = \"linux\") && std::env::var_os(MMAP_THRESHOLD.0).is_none() {",
       "if false {")],
     ["budget::memory_from_large_results_is_returned"]),
    ("read-only grants",
     [(f"{SANDBOX}/store.rs", "let perms = if grant.writable { FsPerms::ReadWrite } else { FsPerms::ReadOnly };",
       "let perms = FsPerms::ReadWrite;")],
     ["hostile::hard_links_cannot_reach_outside_or_into_a_read_only_grant",
      "hostile::renames_stay_inside_their_grant_and_grants_cannot_be_renamed",
      "hostile::no_request_can_change_a_policy",
      "sandbox::the_filesystem_is_exactly_the_grants"]),
    ("no host environment",
     [(f"{SANDBOX}/store.rs", "wasi.envs(&policy.env);", "wasi.inherit_env();")],
     ["hostile::the_host_environment_stays_out"]),
    ("no sockets, no DNS",
     [(f"{SANDBOX}/store.rs", "wasi.allow_tcp(false).allow_udp(false).allow_ip_name_lookup(false);",
       "wasi.inherit_network().allow_ip_name_lookup(true);")],
     ["network::sockets_and_dns_stay_off_even_with_a_network_grant"]),
    ("HTTP allow-list (every request and redirect hop)",
     [("host/src/runtime/network.rs", "if policy.admits(&scheme, &host, port).is_none() {", "if false {")],
     ["network::only_allow_listed_public_addresses_are_reached", "network::redirects_are_checked_at_every_hop"]),
    ("HTTP public addresses only (after DNS)",
     [("host/src/runtime/network.rs", "if !policy.allow_private", "if false")],
     ["network::only_allow_listed_public_addresses_are_reached"]),
    ("wasi:http needs a grant to load",
     [("host/src/runtime/linker.rs", "&& policy.network.is_none()", "&& false")],
     ["network::a_plugin_importing_wasi_http_needs_a_grant_to_load"]),
    ("resource templates of two plugins never overlap",
     [("host/src/runtime/catalog/mod.rs", "self.check_templates_apart(&plugin, &templates)?;", "")],
     ["ownership::a_template_overlapping_another_plugins_is_refused_at_load"]),
    ("a plugin lists only URIs it owns",
     [("host/src/runtime/catalog/dispatch.rs", "all.retain(|(index, resource)| self.owns(*index, &resource.uri));",
       "all.retain(|(index, resource)| self.owns(*index, &resource.uri) || true);")],
     ["ownership::reads_and_listings_of_another_plugins_uris_are_refused"]),
    ("reads go to the owner of the URI only",
     [("host/src/runtime/catalog/ownership.rs", "self.by_template(uri).or_else(|| self.listed.owner(uri))",
       "self.by_template(uri).or_else(|| Some(0))")],
     ["ownership::a_plugin_earlier_in_file_order_cannot_answer_reads_of_another_plugins_resources"]),
    ("a plugin announces updates only for URIs it owns",
     [("host/src/runtime/sandbox/host_api.rs", "&& !owned.contains(&uri)", "&& false")],
     ["ownership::a_plugin_announces_updates_only_for_its_own_uris"]),
    ("descriptors bounded and free of control characters",
     [("host/src/runtime/load.rs",
       "crate::runtime::descriptors::check(&offered.tools, &offered.templates, &offered.prompts).with_context(at)?;", "")],
     ["descriptors::descriptors_over_a_limit_or_with_control_characters_are_refused_at_load"]),
    ("unknown imports refused unless stubbed",
     [("host/src/runtime/linker.rs", "if !policy.stub_ungranted {", "if false {")],
     ["hostile::a_plugin_importing_an_unknown_interface_is_refused_unless_stubbed"]),
    ("tasks only where the operator grants them (a plugin's detach included)",
     [("host/src/runtime/plugin_config.rs", "entry(tool).or_else(|| entry(\"*\"))",
       "entry(tool).or_else(|| entry(\"*\")).or(Some(ToolTasks { required: false, after: None }))")],
     ["tasks::only_the_operator_and_a_declaring_client_make_a_task"]),
    ("a tool required as a task is refused to requests that cannot take one",
     [("host/src/mcp/handler.rs", "if policy.required {", "if false {")],
     ["tasks::only_the_operator_and_a_declaring_client_make_a_task", "tasks::legacy_sessions_get_no_tasks"]),
    ("tasks held per client bounded",
     [("host/src/runtime/tasks/mod.rs", "if own >= self.max_tasks_per_principal {", "if false {")],
     ["tasks::one_client_holds_a_bounded_number_of_tasks"]),
    ("metrics: a tool name a client made up is counted nowhere",
     [("host/src/mcp/handler.rs",
       "return Err(request_error(CallError::UnknownTool { name }));",
       "crate::telemetry::metrics::metrics().tool_call(\"chaos\", &name, \"unknown\", Default::default(), 0);\n            return Err(request_error(CallError::UnknownTool { name }));")],
     ["operations::metrics_count_calls_by_outcome_pass_promtool_and_are_scraped_by_a_real_prometheus"]),
    ("a dead replica's tasks settle as failed in the fleet's store",
     [("host/src/runtime/tasks/entry.rs", "pub fn settle_orphan(&mut self, now: u64) -> bool {\n        if !self.orphaned(now) {",
       "pub fn settle_orphan(&mut self, now: u64) -> bool {\n        if now > 0 || self.orphaned(now) {")],
     ["fleet_kill::a_replica_killed_under_load_loses_nothing"]),
    ("a task's answers checked against the request they answer",
     [("host/src/mcp/tasks/mod.rs", "if !fits {", "if false {")],
     ["tasks::questions_wait_in_the_task_and_are_answered_in_parts"]),
    ("Host checked on every HTTP endpoint (WebSocket before the upgrade)",
     [(f"{TRANSPORT}/guard.rs", "        if !known {", "        if false {")],
     ["websocket::hostile_websocket_input_gets_its_refusal_and_the_server_serves_on"]),
    ("Origin checked on every HTTP endpoint",
     [(f"{TRANSPORT}/guard.rs", "            if !allowed {", "            if false {")],
     ["websocket::hostile_websocket_input_gets_its_refusal_and_the_server_serves_on",
      "legacy_sse::an_old_client_is_served_and_every_bad_post_gets_its_refusal"]),
    ("bearer token on every HTTP endpoint, never from the query",
     [(f"{TRANSPORT}/guard.rs", "if !constant_time_eq(presented.as_bytes(), token.as_bytes()) {", "if false {")],
     ["websocket::a_bearer_token_is_checked_before_the_upgrade_and_never_taken_from_the_query",
      "legacy_sse::the_legacy_transport_needs_the_bearer_token",
      "http::bearer_auth_guards_the_endpoint_in_constant_time"]),
    ("WebSocket messages bounded before they are buffered",
     [(f"{TRANSPORT}/websocket.rs",
       ".max_message_size(sockets.max_message_bytes)\n        .max_frame_size(sockets.max_message_bytes);", ";")],
     ["websocket::hostile_websocket_input_gets_its_refusal_and_the_server_serves_on"]),
    ("a WebSocket client that answers no ping is dropped, its calls cancelled",
     [(f"{TRANSPORT}/websocket.rs", "if awaiting_pong {", "if false {")],
     ["websocket::pings_keep_a_live_client_and_drop_one_that_stops_answering_cancelling_its_calls"]),
    ("the HTTP+SSE transport off unless turned on",
     [("host/src/config/http.rs", "section.legacy_sse.unwrap_or(false)", "section.legacy_sse.unwrap_or(true)")],
     ["legacy_sse::the_legacy_transport_is_off_unless_turned_on"]),
    ("the end of an HTTP+SSE stream ends its session and cancels its calls",
     [(f"{TRANSPORT}/legacy_sse.rs", "        self.sse.sessions().remove(&self.id);\n        self.ended.cancel();\n", "")],
     ["legacy_sse::an_old_client_is_served_and_every_bad_post_gets_its_refusal"]),
    ("heartbeats on SSE streams (a slow response started as SSE included)",
     [(f"{TRANSPORT}/http.rs", ".with_sse_keep_alive(options.heartbeat)", ".with_sse_keep_alive(None)")],
     ["proxy::a_call_slower_than_the_proxy_idle_timeout_completes_with_heartbeats_and_not_without"]),
    ("a Streamable HTTP response slow to start streams at once",
     [(f"{TRANSPORT}/early_stream.rs", "() = tokio::time::sleep(period) => {}", "() = std::future::pending::<()>() => {}")],
     ["proxy::a_call_slower_than_the_proxy_idle_timeout_completes_with_heartbeats_and_not_without"]),
    ("the lean stateless path leaves an Mcp-Name that is not the body's to rmcp's refusal",
     [(f"{TRANSPORT}/stateless.rs", "if header != name || header.starts_with(", "if header.starts_with(")],
     ["http::modern_requests_are_stateless_and_headers_must_match_the_body"]),
    ("the lean stateless path leaves header-bound parameters to rmcp",
     [(f"{TRANSPORT}/stateless.rs", "if lists.binds_headers(&call.params.name) {", "if false {")],
     ["http::the_lean_stateless_path_answers_as_rmcp_does"]),
    ("a call dropped with its client says it was cancelled",
     [(f"{SANDBOX}/mod.rs", "        tracing::warn!(\"call to plugin `{}` was cancelled: its caller went away\", self.0);", "")],
     ["http::a_modern_client_that_disconnects_cancels_its_guest_and_slow_plugins_delay_nobody"]),
    # A guest's protection: the test process rebuilds the guests (scripts/build-guests.sh).
    ("the memory plugin's writers take turns (its lock file)",
     [("plugins/memory/src/lib.rs", "let _lock = lock::Lock::acquire(&path)?;", "let _lock = ();")],
     ["reference_servers::memory_matches_the_reference_server"]),
    ("a registry plugin serves only with a trusted key's signature",
     [("host/src/registry/trust.rs", "if let Some(key) = signed_by(signatures, digest, &keys) {",
       "if let Some(key) = keys.first() {")],
     ["registry::unsigned_wrongly_signed_and_untrusted_components_are_refused_by_name"]),
    ("a signature counts only for the digest it names",
     [("host/src/registry/cosign.rs", "if claim.critical.kind != PAYLOAD_TYPE || claim.critical.image.digest != digest {",
       "if claim.critical.kind != PAYLOAD_TYPE {")],
     ["registry::unsigned_wrongly_signed_and_untrusted_components_are_refused_by_name"]),
    ("store blobs are verified on every read",
     [("host/src/registry/store.rs", "        if actual != digest {", "        if false {")],
     ["registry::pulled_plugins_serve_with_the_registry_down_and_tampered_blobs_are_refused"]),
    ("the plugin size limit holds while downloading",
     [("host/src/registry/client.rs", "if u64::try_from(layer.size).unwrap_or(u64::MAX) > max_bytes {", "if false {"),
      ("host/src/registry/client.rs", "if stream.content_length.is_some_and(|length| length > max_bytes) {", "if false {"),
      ("host/src/registry/client.rs", "if (bytes.len() + chunk.len()) as u64 > max_bytes {", "if false {")],
     ["registry::a_component_over_the_size_limit_is_refused_while_it_downloads"]),
    ("--locked resolves nothing the lock does not pin",
     [("host/src/registry/mod.rs", "(None, None) if how.locked => {", "(None, None) if false => {")],
     ["registry::a_moved_tag_still_serves_the_locked_digest_and_locked_refuses_what_is_not_pinned"]),
    ("mcpbox update resolves pinned tags again",
     [("host/src/registry/mod.rs", "(None, Some(locked)) if !how.refresh => locked,", "(None, Some(locked)) => locked,")],
     ["registry_lifecycle::add_then_update_moves_the_lock_and_a_running_server_follows_it"]),
    ("a running server follows its lock",
     [("host/src/cli/registry/watch.rs", "            pulled.replace(files);", "            drop::<Vec<PathBuf>>(files);")],
     ["registry_lifecycle::add_then_update_moves_the_lock_and_a_running_server_follows_it"]),
    ("pulls go through the configured mirrors",
     [("host/src/registry/client.rs",
       "let mut found: Vec<OciRef> = mirrored.into_iter().flatten().filter_map(|m| reference.via(m).ok()).collect();",
       "let mut found: Vec<OciRef> = Vec::new();")],
     ["registry_lifecycle::a_mirror_serves_the_upstream_reference_with_the_publishers_signature"]),
    ("an access token must be issued for this server (aud)",
     [("host/src/mcp/auth/token.rs", "validation.set_audience(&[&server.audience]);", "validation.validate_aud = false;")],
     ["authorization::tokens_for_another_resource_from_another_issuer_expired_or_forged_are_refused"]),
    ("an access token's signature is verified",
     [("host/src/mcp/auth/token.rs", "    validation.leeway = server.leeway_seconds;\n",
       "    validation.leeway = server.leeway_seconds;\n    validation.insecure_disable_signature_validation();\n")],
     ["authorization::tokens_for_another_resource_from_another_issuer_expired_or_forged_are_refused"]),
    ("with [auth], every MCP request needs an access token",
     [("host/src/mcp/transport/guard.rs", "let Some(oauth) = &admission.oauth else {",
       "let Some(oauth) = None::<&Arc<ResourceServer>> else {")],
     ["authorization::a_token_the_provider_issued_for_this_server_passes_and_the_challenge_says_where_to_get_one"]),
    ("an introspected token must be for this server",
     [("host/src/mcp/auth/introspect.rs", "if !super::strings(answer.aud.as_ref()).contains(&server.audience.as_str()) {",
       "if false {")],
     ["authorization::opaque_tokens_are_checked_by_introspection_as_the_operators_client"]),
    ("a renewed TLS certificate is served",
     [("host/src/mcp/transport/tls.rs",
       "*current.write().unwrap_or_else(std::sync::PoisonError::into_inner) = Arc::new(config);", "drop(config);")],
     ["tls::https_serves_and_a_renewed_certificate_is_picked_up_without_a_restart"]),
    ("[auth] takes no tokens over plain HTTP off loopback",
     [("host/src/config/http.rs",
       "if oauth.is_some() && tls.is_none() && !behind_proxy && !addr.ip().is_loopback() {", "if false {")],
     ["tls::auth_off_loopback_needs_tls_or_a_proxy_in_front"]),
    ("a principal uses only what its entitlements name (lists, calls)",
     [("host/src/mcp/access/entitlements.rs", "        if self.0.is_empty() {\n            return Verdict::Allowed;",
       "        if true {\n            return Verdict::Allowed;")],
     ["principals::lists_show_what_a_principal_may_use_and_a_call_beyond_it_names_the_scope_to_step_up_to"]),
    ("calls per minute are limited per principal",
     [("host/src/mcp/access/limits.rs", "if used.tokens < 1.0 {", "if false {")],
     ["principals::one_principal_over_its_limits_is_refused_with_which_limit_and_when_while_another_is_served"]),
    ("a {sub} directory is the caller's own",
     [("host/src/runtime/principal_dirs.rs", "let host_path = ensure(&grant.host_path, name)?;",
       "let host_path = grant.host_path.clone();")],
     ["principals::each_user_sees_only_their_own_directory_through_the_plugin"]),
    ("a session answers only its opener's tokens",
     [(f"{TRANSPORT}/precheck.rs", "self.owners().get(id).is_some_and(|owner| *owner != principal.key())", "false")],
     ["principals::a_session_is_its_openers_and_a_websocket_closes_when_its_token_expires"]),
    ("a rotated signing key is fetched at once",
     [("host/src/mcp/auth/keys.rs", "        if cached.fetched {\n", "        if true {\n")],
     ["authorization::a_rotated_key_is_fetched_and_a_key_the_issuer_no_longer_has_or_never_had_is_refused"]),
    ("a plugin learns who calls only where the operator allows",
     [("host/src/runtime/plugin.rs", "        if !self.policy.caller {\n            scope.caller = None;",
       "        if false {\n            scope.caller = None;")],
     ["principals::a_plugin_learns_who_calls_only_where_the_operator_says_so"]),
    ("a remembered token is checked afresh after a key rotation",
     [("host/src/mcp/auth/token.rs", "        && generation == keys\n", "        && true\n")],
     ["authorization::a_rotated_key_is_fetched_and_a_key_the_issuer_no_longer_has_or_never_had_is_refused"]),
    ("registry credentials come from the Docker config",
     [("host/src/registry/client.rs", "    match docker_credential::get_credential(registry) {",
       "    match Err::<docker_credential::DockerCredential, _>(\"mutated\") {")],
     ["registry_lifecycle::credentials_come_from_the_docker_config"]),
]


def run_tests(filters):
    """True if every filtered test passed."""
    failed = []
    for test in filters:
        result = subprocess.run(
            ["cargo", "test", "-q", "--test", "integration", "--", "--exact", test],
            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        if result.returncode != 0:
            if "error[E" in result.stdout or "could not compile" in result.stdout:
                raise SystemExit(f"the mutation does not compile:\n{result.stdout[-3000:]}")
            failed.append(test)
    return failed


def main():
    wanted = sys.argv[1] if len(sys.argv) > 1 else ""
    rows = []
    missed = 0
    for name, edits, tests in MUTATIONS:
        if wanted not in name:
            continue
        originals = {file: (ROOT / file).read_text() for file, _, _ in edits}
        mutated = dict(originals)
        for file, before, after in edits:
            if mutated[file].count(before) != 1:
                raise SystemExit(f"{file}: `{before}` is not there exactly once; update this script")
            mutated[file] = mutated[file].replace(before, after)
        start = time.time()
        try:
            for file, text in mutated.items():
                (ROOT / file).write_text(text)
            failed = run_tests(tests)
        finally:
            for file, text in originals.items():
                (ROOT / file).write_text(text)
        caught = len(failed) == len(tests)
        missed += not caught
        rows.append((name, len(failed), len(tests), "caught" if caught else "NOT CAUGHT", time.time() - start))
        print(f"{name}: {len(failed)}/{len(tests)} guarding tests failed", file=sys.stderr, flush=True)
    # Sanity: with every protection on, the same tests pass.
    every = sorted({t for _, _, tests in MUTATIONS for t in tests})
    baseline = run_tests(every) if not wanted else []
    print("| protection switched off | guarding tests that failed | verdict |")
    print("|---|---|---|")
    for name, failed, total, verdict, seconds in rows:
        print(f"| {name} | {failed}/{total} | {verdict} ({seconds:.0f} s) |")
    if baseline:
        print(f"\nwith every protection on, these failed: {baseline}")
    return 1 if missed or baseline else 0


if __name__ == "__main__":
    sys.exit(main())
