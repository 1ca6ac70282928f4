/** The shells `govctl completion` supports, and how to install each script. */

export const SHELLS = ['bash', 'zsh', 'fish', 'powershell'] as const;
export type Shell = (typeof SHELLS)[number];

/** The install instructions, shown in `govctl completion --help` and at the top of each script. */
export const INSTALL: Record<Shell, string[]> = {
  bash: [
    'bash ≥ 4.1: govctl completion bash > ~/.local/share/bash-completion/completions/govctl',
    '(with the bash-completion package), or in ~/.bashrc: source <(govctl completion bash)',
  ],
  zsh: ['govctl completion zsh > "${fpath[1]}/_govctl" (then start a new shell),', 'or in ~/.zshrc after compinit: source <(govctl completion zsh)'],
  fish: ['govctl completion fish > ~/.config/fish/completions/govctl.fish'],
  powershell: ['in your profile ($PROFILE): govctl completion powershell | Out-String | Invoke-Expression'],
};
