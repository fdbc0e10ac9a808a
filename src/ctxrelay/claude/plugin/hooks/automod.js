// ctxrelay's auto-handoff mod: a Claude Code hooks module (Claude Code 2.1.287 or later).
//
// It decides nothing. ctxrelay's Stop hook (Python) decides when a handoff is in flight
// and when it is ready, and says so in the last line of its entry in the Stop answer's
// additionalContext, "[ctxrelay-automod] {json}", which this module takes out before
// the answer goes on (the write prompt before that line goes on to the model):
//
//   {"act": "hold"}                     a handoff file is being written this turn
//   {"act": "clear", "id", "prompt"}    the file is written: when the turn completes,
//                                       run /clear, then submit `prompt`
//
// While a handoff is in flight, what the user types is held (typed while the Stop hooks
// run, it waits for their answer, which may start one), kept in this plugin's store
// against a restart, and taken back out of the prompt box once the drop has put it back
// there. The held prompts are submitted, in order, after the resume prompt, or at the
// end of the turn when no clear follows; Claude Code draws each as "Prompt from the
// ctxrelay-automod plugin" (the model gets the plain text). A handoff id acted on is
// stored too: one handoff, one clear. After a restart the held prompts come back into
// the box, for the user to send.
//
// Python only sends these entries when it sees CTXRELAY_AUTOMOD equal to CLAUDE_PID in
// a hook's environment, which this module sets in an interactive session alone. The
// protocol's owner is ctxrelay.claude._mod_channel.

const MARK = '[ctxrelay-automod] '
const DONE_KEEP = 20
const WAIT_MS = 5000 // the longest a prompt waits on the Stop hooks, or on its restore

let pending = null // {id, prompt}: clear and resume once the turn completes
let holding = false // a handoff is in flight: the user's prompts wait
let held = [] // the prompts held meanwhile, oldest first
let stopping = null // while the Stop hooks run: settles once their answer is read
let dropped = [] // held prompts the drop puts back in the box, to take out once there

const entries = result =>
  Array.isArray(result.additionalContext) ? result.additionalContext : []
const lines = text => (typeof text === 'string' ? text.split('\n') : [])
// The jobs for this module: each entry's lines that start with the mark.
const ours = result =>
  entries(result).flatMap(text => lines(text).filter(line => line.startsWith(MARK)))
// An entry without this module's lines; null when nothing else was in it.
const strip = text => {
  if (!lines(text).some(line => line.startsWith(MARK))) return text
  const rest = lines(text).filter(line => !line.startsWith(MARK)).join('\n').trimEnd()
  return rest.length > 0 ? rest : null
}

// The Stop answer without this module's lines (an entry that was only that is removed).
const without = result => {
  if (ours(result).length === 0) return result
  const { additionalContext, ...kept } = result
  const rest = entries(result).map(strip).filter(text => text !== null)
  return rest.length > 0 ? { ...kept, additionalContext: rest } : kept
}

const heldNow = async ($, texts) => {
  held = texts
  if (texts.length > 0) await $.store.set('held', texts)
  else await $.store.delete('held')
}

const release = async $ => {
  const texts = held
  holding = false
  await heldNow($, [])
  for (const text of texts) await $.prompt.submit({ text, asUser: true })
}

// A held prompt out of the box, where its drop put it back after anything typed since:
// once, when the change that put it there is seen, or WAIT_MS on (the box read then).
const takeBack = async ($, text, box) => {
  if (!dropped.includes(text)) return
  dropped.splice(dropped.indexOf(text), 1)
  box ??= (await $.prompt.read()).text
  if (box.includes(text)) await $.prompt.fill({ text: box.replace(text, '').trim() })
}

const handOff = async ($, job) => {
  const done = (await $.store.get('done')) ?? []
  if (done.includes(job.id)) return release($)
  await $.store.set('done', [...done, job.id].slice(-DONE_KEEP)) // before acting: once
  try {
    await $.command.run({ command: 'clear' })
    await $.prompt.submit({ text: job.prompt })
  } finally {
    await release($) // what was typed meanwhile goes in, cleared or not
  }
}

export function register(on) {
  on('session.start', async ($, e, next) => {
    const started = await next(e)
    if (e.isInteractive !== true) return started
    const { CLAUDE_PID } = await $.process.hookEnv()
    await $.env.set('CTXRELAY_AUTOMOD', CLAUDE_PID)
    const kept = (await $.store.get('held')) ?? []
    if (kept.length > 0) {
      // Typed during a handoff that a restart cut short: back in the prompt box.
      await heldNow($, [])
      await $.prompt.fill({ text: kept.join('\n\n'), mode: 'append' })
    }
    return started
  })

  on('classic.Stop', async ($, e, next) => {
    let read
    stopping = new Promise(resolve => (read = resolve))
    try {
      const result = await next(e)
      for (const text of ours(result)) {
        const job = JSON.parse(text.slice(MARK.length))
        holding = true
        if (job.act === 'clear') pending = { id: job.id, prompt: job.prompt }
      }
      return without(result)
    } finally {
      stopping = null
      read()
    }
  }).catch(async ($, e, next) => without(await next(e))) // never let an entry through

  on('turn.complete', async ($, e, next) => {
    const answer = await next(e)
    if (e.agentId !== undefined || !holding) return answer
    const job = pending
    pending = null
    // Queued behind the turn: a command or prompt run from inside it would wait on it.
    void (job === null ? release($) : handOff($, job)).catch(error =>
      $.ui.log(`ctxrelay: the handoff did not go through: ${error}`),
    )
    return answer
  })

  on('prompt.submit', async ($, e, next) => {
    if (e.command !== undefined || e.origin?.kind !== 'composer') return next(e)
    if (!holding && stopping !== null) // their answer may start a handoff: wait for it
      await Promise.race([stopping, $.clock.sleep(WAIT_MS, { signal: next.signal })])
    if (!holding) return next(e)
    await heldNow($, [...held, e.text])
    dropped.push(e.text)
    $.clock.after(WAIT_MS, () => void takeBack($, e.text).catch(() => {}))
    return { drop: 'ctxrelay: held until the fresh session has resumed from the handoff' }
  }).catch(($, e, next) => next(e)) // a failed hold lets the prompt through

  // The drop's restore, once this handler has returned, is the engine's "draft put back".
  on('prompt.change', { origin: { kind: 'engine' } }, ($, e, next) => {
    const text = dropped.find(one => e.text.includes(one))
    if (text !== undefined) void takeBack($, text, e.text).catch(() => {})
    return next(e)
  })
}
