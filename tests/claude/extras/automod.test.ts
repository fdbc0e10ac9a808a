// The auto-handoff mod (automod.js) on Claude Code's own engine: `claude plugin test`
// loads it as a session would, and the hooks here stand beneath it for the engine (the
// settings hooks of a Stop, the prompt box, the store, the clock). tests/claude/
// test_automod.py lays the mod out with this file and runs it.
import { expect, mock, test } from 'claude-code/testing'

const HOLD = 'Write the handoff file.\n\n[ctxrelay-automod] {"act": "hold"}'
const CLEAR = '[ctxrelay-automod] {"act": "clear", "id": "h.md", "prompt": "Resume from h.md"}'
const TYPED = { origin: { kind: 'composer' }, wait: false } as const
const WAIT_MS = 5000

// The engine beneath the mod: a prompt box, what entered the session, the Stop hooks'
// answer once the test opens them.
function engine(on) {
  mock.store(on)
  const clock = mock.clock(on)
  const world = { box: '', fills: [], entered: [], ran: [], answer: {}, reached: null, open: null }
  let count = { n: Infinity, done: () => {} }
  world.entering = n => new Promise(done => (count = { n, done })) // until n have entered
  const stopped = new Promise(resolve => (world.open = resolve))
  world.reached = new Promise(resolve => {
    on('classic.Stop', async () => {
      resolve()
      await stopped
      return world.answer
    })
  })
  on('prompt.read', () => ({ value: { text: world.box, cursor: world.box.length } }))
  on('prompt.fill', (_, e) => {
    world.fills.push(e.text)
    world.box = e.text
    return { isFilled: true, text: e.text, cursor: e.text.length }
  })
  on('prompt.change', (_, e) => ({ text: e.text }))
  on('prompt.submit', (_, e) => {
    world.entered.push(e.text)
    if (world.entered.length >= count.n) count.done()
    return { text: e.text }
  })
  on('command.run', (_, e) => {
    world.ran.push(e.command)
    return { text: '' }
  })
  on('turn.complete', () => ({ text: '' }))
  return { world, clock }
}

const stop = $ => $.classic.Stop({ stop_hook_active: false, last_assistant_message: 'done' })

// The engine's drop puts the text back in the box, joined to what is there, and says so.
async function restore($, world, text) {
  world.box = world.box === '' ? text : `${world.box}\n${text}`
  await $.prompt.change({ text: world.box, cursor: world.box.length, origin: { kind: 'engine' } })
}

test('a prompt typed while the Stop hooks run is held when they start a handoff', async ($, on) => {
  const { world } = engine(on)
  const stopping = stop($)
  await world.reached
  const typed = $.prompt.submit({ text: 'early', ...TYPED })
  world.answer = { additionalContext: [HOLD] }
  world.open()
  expect(await stopping).toEqual({ additionalContext: ['Write the handoff file.'] })
  expect(await typed).toEqual({ drop: expect.stringContaining('held until') })
  expect(world.entered).toEqual([])
})

test('a prompt typed while the Stop hooks run goes on once they start none', async ($, on) => {
  const { world } = engine(on)
  const stopping = stop($)
  await world.reached
  const typed = $.prompt.submit({ text: 'early', ...TYPED })
  world.open()
  await stopping
  expect(await typed).toEqual({ text: 'early' })
  expect(world.entered).toEqual(['early'])
})

test('a prompt waits on Stop hooks that never answer no longer than WAIT_MS', async ($, on) => {
  const { world, clock } = engine(on)
  const stopping = stop($)
  await world.reached
  const typed = $.prompt.submit({ text: 'early', ...TYPED })
  await clock.advance(WAIT_MS)
  expect(await typed).toEqual({ text: 'early' })
  world.open()
  await stopping
})

test('a held prompt leaves the box once the drop put it back, and only then', async ($, on) => {
  const { world } = engine(on)
  world.answer = { additionalContext: [HOLD] }
  world.open()
  await stop($)
  expect(await $.prompt.submit({ text: 'later', ...TYPED })).toEqual({
    drop: expect.stringContaining('held until'),
  })
  expect(world.fills).toEqual([]) // nothing to empty yet: the box is not restored
  world.box = 'typed since'
  await restore($, world, 'later')
  expect(world.fills).toEqual(['typed since'])
  // A recall of it from the history is the user's: left in the box.
  await $.prompt.change({ text: 'later', cursor: 5, origin: { kind: 'history' } })
  expect(world.fills).toEqual(['typed since'])
})

test('a restore no change reported is taken out WAIT_MS on; an absent one is left', async ($, on) => {
  const { world, clock } = engine(on)
  world.answer = { additionalContext: [HOLD] }
  world.open()
  await stop($)
  await $.prompt.submit({ text: 'one', ...TYPED })
  await $.prompt.submit({ text: 'two', ...TYPED })
  world.box = 'one'
  await clock.advance(WAIT_MS)
  expect(world.fills).toEqual([''])
  expect(world.box).toEqual('')
})

test('held prompts go in after the resume prompt, once each, in order', async ($, on) => {
  const { world } = engine(on)
  world.answer = { additionalContext: [CLEAR] }
  world.open()
  expect(await stop($)).toEqual({})
  await $.prompt.submit({ text: 'one', ...TYPED })
  await $.prompt.submit({ text: 'two', ...TYPED })
  const entered = world.entering(3)
  await $.turn.complete({ answer: 'written', reason: 'completed' })
  await entered // the mod queues them behind the turn
  expect(world.ran).toEqual(['clear'])
  expect(world.entered).toEqual(['Resume from h.md', 'one', 'two'])
})
