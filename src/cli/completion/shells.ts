/** The shells `govctl completion` supports, and how to install each script. */

export const SHELLS = ['bash', 'zsh', 'fish'] as const;
export type Shell = (typeof SHELLS)[number];

/** The install instructions, shown in `govctl completion --help` and at the top of each script. */
export const INSTALL: Record<Shell, string[]> = {
  bash: [
    'Install (bash ≥ 4.1, with bash-completion): govctl completion bash > ~/.local/share/bash-completion/completions/govctl',
    'or add to ~/.bashrc: source <(govctl completion bash)',
  ],
  zsh: [
    'Install: govctl completion zsh > "${fpath[1]}/_govctl" (then start a new shell),',
    'or add to ~/.zshrc after compinit: source <(govctl completion zsh)',
  ],
  fish: ['Install: govctl completion fish > ~/.config/fish/completions/govctl.fish'],
};

