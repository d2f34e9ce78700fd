import { AutoModerationKeywordPresetTypes as Presets } from '@hearth/protocol';

/**
 * The word sets behind KEYWORD_PRESET rules (DOCS auto-moderation: Keyword Preset Types). The platform's
 * lists are internal; these are Hearth's own, deliberately short, written in the keyword syntax of
 * KEYWORD rules (`word*` prefix, `*word` suffix, `*word*` anywhere, bare = whole word) and matched the
 * same way, with the rule's `allow_list` applied. A deployment that needs more uses KEYWORD rules.
 */
export const KEYWORD_PRESETS: Readonly<Record<number, readonly string[]>> = {
  // Forms of swearing or cursing.
  [Presets.Profanity]: [
    'fuck*',
    '*fucker',
    'motherfuck*',
    'shit*',
    'bullshit',
    'bitch*',
    'asshole*',
    'bastard*',
    'dickhead*',
    'cunt*',
    'wanker*',
    'piss off',
    'bollocks',
  ],
  // Words referring to sexually explicit behaviour or activity.
  [Presets.SexualContent]: [
    'porn*',
    'blowjob*',
    'handjob*',
    'cumshot*',
    'dildo*',
    'masturbat*',
    'jerk off',
    'nudes',
    'send nudes',
    'sexting',
    'camgirl*',
  ],
  // Personal insults and words that may be considered hate speech.
  [Presets.Slurs]: [
    'retard*',
    'faggot*',
    'fag',
    'fags',
    'tranny',
    'trannies',
    'spastic*',
    'kike*',
    'chink*',
    'wetback*',
  ],
};
