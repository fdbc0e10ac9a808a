// ctxrelay's auto-handoff mod: a Claude Code hooks module (Claude Code 2.1.287 or later).
//
// It decides nothing. ctxrelay's Stop hook (Python) decides when a handoff is in flight
// and when it is ready, and says so in one entry of the Stop answer's
// additionalContext, "[ctxrelay-automod] {json}", which this module takes out before
// the answer goes on, so the model never reads it. The module only carries it out:
//
//   {"act": "hold"}                     a handoff file is being written this turn
//   {"act": "clear", "id", "prompt"}    the file is written: when the turn completes,
//                                       run /clear, then submit `prompt`
//
// While a handoff is in flight, what the user types is held (and kept in this
// plugin's store, so a restart of Claude Code does not lose it) and submitted as the
// user's own words after the resume prompt, or at the end of the turn when no clear
// follows. A handoff id it has acted on is stored too: one handoff, one clear.
//
// Python only sends these entries when it sees CTXRELAY_AUTOMOD equal to
// CLAUDE_PID in a hook's environment, which this module sets in an interactive
// session alone (a headless run, `ctxrelay claude run` included, starts its fresh
// sessions itself). The protocol's owner is ctxrelay.claude._mod_channel.

const MARK = '[ctxrelay-automod] '
const DONE_KEEP = 20

let pending = null // {id, prompt}: clear and resume once the turn completes
let holding = false // a handoff is in flight: the user's prompts wait
let held = [] // the prompts held meanwhile, oldest first

const entries = result =>
  Array.isArray(result.additionalContext) ? result.additionalContext : []
const ours = result => entries(result).filter(text => text.startsWith(MARK))

// The Stop answer without the entries for this module.
const without = result => {
  if (ours(result).length === 0) return result
  const { additionalContext, ...kept } = result
  const rest = entries(result).filter(text => !text.startsWith(MARK))
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
    const result = await next(e)
    for (const text of ours(result)) {
      const job = JSON.parse(text.slice(MARK.length))
      holding = true
      if (job.act === 'clear') pending = { id: job.id, prompt: job.prompt }
    }
    return without(result)
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
    if (!holding || e.command !== undefined || e.origin?.kind !== 'composer') return next(e)
    await heldNow($, [...held, e.text])
    return { drop: 'ctxrelay: held until the fresh session has resumed from the handoff' }
  }).catch(($, e, next) => next(e)) // a failed hold lets the prompt through
}
