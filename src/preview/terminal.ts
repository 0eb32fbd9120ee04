// Which image protocol a terminal speaks, told from its environment the way
// image viewers (chafa, timg, kitty's icat) tell it: no query is sent to the
// terminal, so detection costs nothing and never leaves an answer on stdin.
// Kept free of dependencies: `generate --preview` reads it before deciding
// whether to load the image library at all.
import { spawnSync } from 'node:child_process';

export const PROTOCOLS = ['kitty', 'iterm', 'sixel', 'blocks'] as const;
export type Protocol = (typeof PROTOCOLS)[number];

/** How the half-block fallback paints: 24-bit colour, or the xterm 256-colour palette. */
export type ColorDepth = 'truecolor' | '256';

export interface TerminalGraphics {
  protocol: Protocol;
  colors: ColorDepth;
  /** Inside tmux with passthrough allowed: the graphics go to the terminal around tmux, wrapped. */
  passthrough?: 'tmux';
  /** Why this protocol, for --verbose. */
  reason: string;
}

type Env = Record<string, string | undefined>;

/** The 24-bit colour terminals say so (COLORTERM), or are known to have it. */
export function colorDepth(env: Env): ColorDepth {
  const colorterm = (env.COLORTERM ?? '').toLowerCase();
  if (colorterm === 'truecolor' || colorterm === '24bit') return 'truecolor';
  const term = env.TERM ?? '';
  if (term.endsWith('-direct') || ['xterm-kitty', 'xterm-ghostty', 'alacritty', 'foot', 'foot-extra', 'wezterm', 'contour'].includes(term)) return 'truecolor';
  if (env.KITTY_WINDOW_ID || env.WT_SESSION) return 'truecolor';
  if (['iTerm.app', 'WezTerm', 'vscode', 'ghostty', 'Hyper', 'mintty'].includes(env.TERM_PROGRAM ?? '')) return 'truecolor';
  return '256';
}

/** The graphics protocol of the terminal itself (outside any multiplexer), from what it puts in the environment. */
function nativeProtocol(env: Env): { protocol: Protocol; reason: string } | undefined {
  const term = env.TERM ?? '';
  const program = env.TERM_PROGRAM ?? '';
  if (env.KITTY_WINDOW_ID) return { protocol: 'kitty', reason: 'KITTY_WINDOW_ID is set (kitty)' };
  if (term === 'xterm-kitty') return { protocol: 'kitty', reason: 'TERM is xterm-kitty' };
  if (program === 'ghostty' || term === 'xterm-ghostty' || env.GHOSTTY_RESOURCES_DIR) return { protocol: 'kitty', reason: 'Ghostty' };
  // WezTerm speaks the kitty protocol only when configured to; iTerm2's it always does.
  if (program === 'iTerm.app' || env.LC_TERMINAL === 'iTerm2') return { protocol: 'iterm', reason: 'iTerm2 (TERM_PROGRAM or LC_TERMINAL)' };
  if (program === 'WezTerm' || env.WEZTERM_EXECUTABLE) return { protocol: 'iterm', reason: 'WezTerm' };
  if (program === 'mintty') return { protocol: 'iterm', reason: 'mintty' };
  if (term.startsWith('foot')) return { protocol: 'sixel', reason: `TERM is ${term} (foot)` };
  if (term.startsWith('mlterm') || env.MLTERM) return { protocol: 'sixel', reason: 'mlterm' };
  if (term === 'contour' || program === 'contour') return { protocol: 'sixel', reason: 'contour' };
  return undefined;
}

/** Whether tmux passes escape sequences through to the terminal around it (`set -g allow-passthrough on`, tmux 3.3+). */
export function tmuxAllowsPassthrough(env: Env): boolean {
  const result = spawnSync('tmux', ['show-options', '-gv', 'allow-passthrough'], { env: env as NodeJS.ProcessEnv, encoding: 'utf8', timeout: 1000, stdio: ['ignore', 'pipe', 'ignore'] });
  return result.status === 0 && ['on', 'all'].includes(result.stdout.trim());
}

/**
 * The protocol to use on this terminal. Inside tmux the terminal around it is
 * known only from what survives into tmux's environment (KITTY_WINDOW_ID,
 * LC_TERMINAL); its graphics pass through only when tmux allows it, and
 * otherwise half-blocks, which every multiplexer shows. GNU screen cuts long
 * sequences, so there it is always half-blocks.
 */
export function detectGraphics(env: Env, passthroughAllowed: (env: Env) => boolean = tmuxAllowsPassthrough): TerminalGraphics {
  const colors = colorDepth(env);
  const term = env.TERM ?? '';
  const inTmux = Boolean(env.TMUX) || term.startsWith('tmux');
  const inScreen = !inTmux && (Boolean(env.STY) || term.startsWith('screen'));
  if (inScreen) return { protocol: 'blocks', colors, reason: 'inside GNU screen, which passes no graphics through' };
  const native = nativeProtocol(env);
  if (inTmux) {
    if (!native) return { protocol: 'blocks', colors, reason: 'inside tmux, around a terminal without a known image protocol' };
    if (!passthroughAllowed(env)) return { protocol: 'blocks', colors, reason: `inside tmux without allow-passthrough (the terminal around it speaks ${native.protocol})` };
    return { protocol: native.protocol, colors, passthrough: 'tmux', reason: `${native.reason}, through tmux's passthrough` };
  }
  if (native) return { ...native, colors };
  return { protocol: 'blocks', colors, reason: `no image protocol known for TERM=${term || '(unset)'}; ${colors === 'truecolor' ? '24-bit' : '256'}-colour half-blocks` };
}
