//! How much of a call's output limit a result takes: the bytes of its payload plus a fixed
//! overhead per block, so that a flood of empty blocks counts too. (Log, progress and resource
//! announcements are counted as they happen, in the sandbox's `admit`.)

use crate::runtime::bindings::{completion, prompts, resources, tools, types};

/// What a block costs beyond its payload on the wire (type, field names, framing).
const BLOCK_OVERHEAD: usize = 64;

fn resource_contents(contents: &types::ResourceContents) -> usize {
    contents.uri.len()
        + match &contents.body {
            types::ResourceBody::Text(text) => text.len(),
            types::ResourceBody::Blob(bytes) => bytes.len(),
        }
}

/// A resource read's contents.
pub(crate) fn contents(contents: &[types::ResourceContents]) -> usize {
    contents.iter().map(resource_contents).sum()
}

fn content_block(block: &types::ContentBlock) -> usize {
    BLOCK_OVERHEAD
        + match block {
            types::ContentBlock::Text(t) => t.text.len(),
            types::ContentBlock::Image(m) | types::ContentBlock::Audio(m) => m.data.len(),
            types::ContentBlock::Embedded(e) => resource_contents(&e.contents),
            types::ContentBlock::ResourceLink(l) => l.uri.len() + l.name.len(),
        }
}

/// A tool's result.
pub(crate) fn call_result(result: &tools::CallResult) -> usize {
    result.content.iter().map(content_block).sum::<usize>() + result.structured_content.as_ref().map_or(0, String::len)
}

/// A resource listing.
pub(crate) fn resource_list(resources: &[resources::Resource]) -> usize {
    resources.iter().map(|r| BLOCK_OVERHEAD + r.uri.len() + r.name.len()).sum()
}

/// A prompt's messages.
pub(crate) fn prompt_result(result: &prompts::PromptResult) -> usize {
    result.messages.iter().map(|m| content_block(&m.content)).sum()
}

/// Completion values.
pub(crate) fn completion(result: &completion::CompletionResult) -> usize {
    result.values.iter().map(String::len).sum()
}
