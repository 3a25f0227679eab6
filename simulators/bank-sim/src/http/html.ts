/** The bank's browser pages: plain HTML forms, no scripts, so any browser (and curl) can drive them. */

export function escapeHtml(text: string): string {
  return text.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;').replaceAll('"', '&quot;').replaceAll("'", '&#39;')
}

export function page(title: string, body: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)} - Bank simulator</title>
<style>
body { font-family: system-ui, sans-serif; max-width: 34rem; margin: 3rem auto; padding: 0 1rem; color: #222; }
h1 { font-size: 1.4rem; } .bank { color: #c8102e; font-weight: bold; }
label { display: block; margin: .6rem 0 .2rem; } input[type=text], input[type=password] { width: 100%; padding: .4rem; }
.error { background: #fde8e8; border: 1px solid #e0a0a0; padding: .5rem; } .note { color: #555; font-size: .9rem; }
button { margin: 1rem .5rem 0 0; padding: .5rem 1.2rem; } table { border-collapse: collapse; } td { padding: .2rem .6rem .2rem 0; }
</style>
</head>
<body>
<p class="bank">Bank simulator (bank code 5500)</p>
${body}
</body>
</html>`
}

export function hidden(fields: Record<string, string>): string {
  return Object.entries(fields)
    .map(([k, v]) => `<input type="hidden" name="${escapeHtml(k)}" value="${escapeHtml(v)}">`)
    .join('\n')
}

export function errorBox(message: string | undefined): string {
  return message ? `<p class="error" role="alert">${escapeHtml(message)}</p>` : ''
}

export function loginFields(): string {
  return `<label for="username">Username</label><input type="text" id="username" name="username" autocomplete="username">
<label for="password">Password</label><input type="password" id="password" name="password" autocomplete="current-password">`
}
