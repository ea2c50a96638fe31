// An mcpbox plugin in JavaScript: tools, a resource, a resource template and a prompt, each a
// plain function registered on a Plugin (see mcpbox.js for the schema helpers).

import { InvalidArguments, Plugin, integer, log, object, oneOf, optional, string } from './mcpbox.js';

const plugin = new Plugin();

plugin.tool(
  'greet',
  'Greets someone by name.',
  object({
    name: string('Who to greet.'),
    style: optional(oneOf(['plain', 'excited'], 'How enthusiastic the greeting is.')),
  }),
  ({ name, style = 'plain' }) => `Hello, ${name}${style === 'excited' ? '!' : '.'}`,
  { readOnly: true },
);

plugin.tool(
  'count',
  'Counts the lines, words and characters of a text.',
  object({ text: string('The text to count.') }),
  ({ text }) => ({
    lines: text.split('\n').filter((line, i, all) => i < all.length - 1 || line !== '').length,
    words: text.split(/\s+/).filter(Boolean).length,
    characters: [...text].length,
  }),
  {
    readOnly: true,
    outputSchema: object({ lines: integer(), words: integer(), characters: integer() }),
  },
);

plugin.tool(
  'repeat',
  'Repeats a word.',
  object({ word: string('The word.'), times: integer('How often, 1 to 100.') }),
  ({ word, times }) => {
    if (times < 1 || times > 100) throw new InvalidArguments('`times` must be between 1 and 100');
    log('debug', `repeating ${word} ${times} times`);
    return Array(times).fill(word).join(' ');
  },
  { readOnly: true },
);

plugin.resource('js://about', 'about', () => 'An mcpbox plugin written in JavaScript and built with componentize-js.', {
  description: 'What this plugin is.',
});

plugin.resource('greeting://{name}', 'greeting', ({ name }) => `Hello, ${name}.`, {
  description: 'A greeting for anyone, by URI.',
});

plugin.prompt(
  'review',
  'Asks the model to review a piece of code.',
  { code: { description: 'The code to review.' }, focus: { description: 'What to look at first.', required: false } },
  ({ code, focus = 'correctness' }) => `Review this code, looking at ${focus} first:\n\n${code}`,
);

export const { tools, resources, prompts, completion } = plugin.exports();
