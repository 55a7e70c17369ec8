// supamem's pages: the chat and the Memory settings tab. Every call is the JSON API with the
// signed-in user's access token (sessionStorage "supamem.token"); nothing here decides what a
// user may see: the database does.
"use strict";

const TOKEN_KEY = "supamem.token";

function token() {
  return sessionStorage.getItem(TOKEN_KEY);
}

function showError(message) {
  const box = document.getElementById("error");
  if (!box) return;
  box.textContent = message;
  box.hidden = !message;
}

// A fetch with the token; a failed response is shown in the error box and thrown.
// A body is sent as JSON, or as it is under another `type` (a CSV file).
async function send(method, path, body, type = "application/json") {
  const headers = { Authorization: `Bearer ${token()}` };
  if (body !== undefined) headers["Content-Type"] = type;
  const payload = body === undefined || type !== "application/json" ? body : JSON.stringify(body);
  const response = await fetch(path, { method, headers, body: payload });
  if (response.status === 401) {
    showError("Please sign in again: your session has ended.");
    throw new Error("unauthorized");
  }
  if (!response.ok) {
    let detail = response.statusText;
    try { detail = (await response.json()).detail; } catch (_) { /* not JSON */ }
    const message = typeof detail === "string" ? detail : JSON.stringify(detail);
    showError(message);
    throw new Error(message);
  }
  return response;
}

async function api(method, path, body, bodyType) {
  const response = await send(method, path, body, bodyType);
  showError("");
  if (response.status === 204) return null;
  const type = response.headers.get("content-type") || "";
  return type.includes("application/json") ? response.json() : response.text();
}

function el(tag, attributes, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attributes || {})) {
    if (key === "class") node.className = value;
    else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else node.setAttribute(key, value);
  }
  for (const child of children) node.append(child);
  return node;
}

// A response's server-sent events: onEvent(name, data) for each, until it returns true or the
// stream ends.
async function readEvents(response, onEvent) {
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buffer += decoder.decode(value, { stream: true });
    let cut;
    while ((cut = buffer.indexOf("\n\n")) >= 0) {
      const lines = buffer.slice(0, cut).split("\n");
      buffer = buffer.slice(cut + 2);
      const name = (lines.find((line) => line.startsWith("event: ")) || "").slice(7);
      const data = lines.find((line) => line.startsWith("data: "));
      if (data && onEvent(name, JSON.parse(data.slice(6)))) return;
    }
  }
}

// Server-sent events from GET /api/events, read with fetch so the token stays in a header. Each
// time the stream opens, onOpen re-reads what may have changed while none was open (announcements
// are not replayed).
async function followMemories(onEvent, onOpen) {
  for (;;) {
    try {
      const response = await fetch("/api/events", { headers: { Authorization: `Bearer ${token()}` } });
      if (!response.ok) return;
      if (onOpen) await onOpen();
      document.body.dataset.live = "yes";
      await readEvents(response, (name, data) => { if (name === "memory") onEvent(data); });
    } catch (_) { /* the stream broke: open it again */ }
    document.body.dataset.live = "no";
  }
}

// --- sign in --------------------------------------------------------------------------------

function signin() {
  const fragment = new URLSearchParams(location.hash.slice(1));
  const given = fragment.get("token");
  const status = document.getElementById("signin-status");
  history.replaceState(null, "", "/signin");
  if (!given) {
    status.textContent = "This link carries no access token.";
    return;
  }
  // A link must not quietly sign the reader in as someone else, whose account would keep what
  // they type next.
  const held = token();
  if (held && subject(held) !== subject(given)
      && !confirm("This link signs you in as another account. Switch to it?")) {
    location.assign("/chat");
    return;
  }
  sessionStorage.setItem(TOKEN_KEY, given);
  location.assign(samePath(fragment.get("next")));
}

// A path of this site, or /chat: `next` must neither take the reader elsewhere nor run a script
// (a javascript: URL would run with the token at hand).
function samePath(next) {
  if (!next || !/^\/(?!\/)/.test(next)) return "/chat";
  const url = new URL(next, location.origin);
  return url.origin === location.origin ? url.pathname + url.search + url.hash : "/chat";
}

// The user id a token names, or null for one that is not a JWT.
function subject(jwt) {
  try {
    return JSON.parse(atob(jwt.split(".")[1].replace(/-/g, "+").replace(/_/g, "/"))).sub;
  } catch {
    return null;
  }
}

// --- chat -----------------------------------------------------------------------------------

const chat = { session: null, profiles: [], overview: null, conversation: null, participation: null, undo: null };

// The signed-in user's id, from the access token's claims.
function me() {
  return subject(token());
}

// The profile this chat's memory follows: the conversation's, or in together mode the one the
// participant chose for it.
function chatProfileId() {
  return chat.participation ? chat.participation.profile_id : (chat.conversation && chat.conversation.profile_id);
}

function primaryProfile() {
  return chat.profiles.find((p) => p.is_primary) || null;
}

function memoryActive() {
  const c = chat.conversation;
  const primary = primaryProfile();
  return Boolean(c && primary && chatProfileId() === primary.id && c.remember && !chat.overview.memory_paused);
}

function renderHeader() {
  const icon = document.getElementById("memory-icon");
  const active = memoryActive();
  icon.classList.toggle("off", !active);
  const label = active ? "Memory is on: this chat builds your memory" : "Memory is off in this chat";
  icon.setAttribute("aria-label", label);
  icon.title = label;
  const toggle = document.getElementById("remember-toggle");
  // "Remember in this chat" is the owner's switch.
  toggle.disabled = !chat.conversation || !chatProfileId() || chat.conversation.archived || Boolean(chat.participation);
  toggle.checked = Boolean(chat.conversation && chat.conversation.remember && chatProfileId());
}

// Seed 002's sidebar: recent conversations, or those the search finds (titles first, then by
// their best matching turn), live or archived; one opens with its messages.
async function loadConversations() {
  const query = document.getElementById("conversation-search").value.trim();
  const params = new URLSearchParams({ archived: document.getElementById("show-archived").checked });
  if (query) params.set("search", query);
  else params.set("limit", 50);
  const found = await api("GET", `/api/conversations?${params}`);
  document.getElementById("conversation-list").replaceChildren(...found.map((c) => el("li", {},
    el("button", { type: "button", class: c.id === chat.session ? "active" : "", "data-id": c.id,
      onclick: () => openConversation(c.id) }, c.title || "Untitled conversation"))));
}

function showConversation(conversation) {
  chat.conversation = conversation;
  chat.session = conversation.id;
  // The address names the conversation, so a refresh (or a bookmark) opens it again.
  history.replaceState(null, "", `/chat?c=${conversation.id}`);
  document.getElementById("conversation-title").value = conversation.title || "";
  // An archived conversation is read-only until it is unarchived (the chat endpoint refuses it).
  document.getElementById("archive-conversation").textContent = conversation.archived ? "Unarchive" : "Archive";
  document.getElementById("archived-note").hidden = !conversation.archived;
  for (const id of ["chat-input", "chat-send", "conversation-title"]) {
    document.getElementById(id).disabled = conversation.archived;
  }
  // Renaming, archiving and deleting are the owner's: a participant sees none of them.
  document.getElementById("conversation-title").disabled ||= Boolean(chat.participation);
  for (const id of ["archive-conversation", "delete-conversation"]) {
    document.getElementById(id).hidden = Boolean(chat.participation);
  }
  renderHeader();
}

async function openConversation(id) {
  const conversation = await api("GET", `/api/conversations/${id}`);
  // Someone else's conversation this user takes part in (together mode): their own profile for it.
  chat.participation = conversation.user_id === me() ? null : await api("GET", `/api/conversations/${id}/participants/me`);
  showConversation(conversation);
  document.getElementById("profile-select").value = chatProfileId() || "";
  document.getElementById("messages").replaceChildren();
  // Each answer's chips, as when it was given (a memory deleted since, or another person's, is left out).
  const used = new Map(conversation.used_memories.map((memory) => [memory.id, memory]));
  // Who asked each turn's question: only they rate its answer.
  const askers = new Map(conversation.messages.filter((m) => m.role === "user")
    .map((m) => [m.turn_number, m.author_id || conversation.user_id]));
  for (const message of conversation.messages) {
    const rated = message.role === "assistant" && askers.get(message.turn_number) === me() ? message : null;
    addMessage(message.role, message.content, message.used_memory_ids.map((id) => used.get(id)).filter(Boolean), rated);
  }
  await loadConversations();
  onboard(chatProfileId());
}

async function startSession(profileId) {
  chat.participation = null;
  const body = profileId ? { mode: "profile", profile_id: profileId } : { mode: "chat" };
  showConversation(await api("POST", "/api/conversations", body));
  document.getElementById("messages").replaceChildren();
  await loadConversations();
  onboard(profileId);
}

// Each account's own: another account signed in on the same browser gets the notice too.
function onboardedKey() {
  return `supamem.onboarded.${me()}`;
}

// Seed 004: the notice comes with the first chat from the Main Profile, however it got there.
function onboard(profileId) {
  const primary = primaryProfile();
  if (primary && profileId === primary.id && !localStorage.getItem(onboardedKey())) {
    document.getElementById("onboarding").hidden = false;
  }
}

// Seed 004's helpfulness: the one who asked rates the answer; pressing the pressed one takes it back.
function rating(answer) {
  const box = el("div", { class: "rating" });
  const draw = (helpful) => {
    for (const button of box.children) button.setAttribute("aria-pressed", String(button.dataset.helpful === String(helpful)));
  };
  for (const [helpful, label] of [[true, "Helpful"], [false, "Not helpful"]]) {
    const button = el("button", { type: "button", class: "rate", "data-helpful": String(helpful) }, label);
    button.addEventListener("click", async () => {
      const again = button.getAttribute("aria-pressed") === "true";
      draw((await api("PUT", `/api/messages/${answer.id}/rating`, { helpful: again ? null : helpful })).helpful);
    });
    box.append(button);
  }
  draw(answer.helpful);
  return box;
}

// `rated`: the stored answer ({id, helpful}) when this user may rate it.
function addMessage(role, text, used, rated) {
  const item = el("li", { class: role }, el("span", { class: "text" }, text));
  if (used && used.length) {
    // Seed 004's footer ("Used: [M-143 goal], [M-97 pattern]"); hovering shows the memory, a click opens it.
    const chips = el("div", { class: "chips" }, "Used: ");
    used.forEach((memory, i) => {
      if (i) chips.append(", ");
      chips.append(el("a", { class: "chip", href: `/settings/memory#memory-${memory.id}`, title: memory.content },
        `[M-${memory.number} ${memory.type}]`));
    });
    item.append(chips);
  }
  if (rated) item.append(rating(rated));
  document.getElementById("messages").append(item);
  return item;
}

// POST /chat?stream=true: `onToken` gets each piece of the answer; resolves to the stored answer
// (the `done` event), or null after showing the error.
async function streamChat(body, onToken) {
  const response = await send("POST", "/chat?stream=true", body).catch(() => null);
  if (!response) return null;
  let answer = null;
  await readEvents(response, (name, payload) => {
    if (name === "token") onToken(payload);
    else if (name === "error") showError(payload.detail);
    else if (name === "done") { showError(""); answer = payload; }
    return name !== "token";
  });
  return answer;
}

function showToast(text, onUndo) {
  document.getElementById("toast-text").textContent = text;
  chat.undo = onUndo;
  document.getElementById("toast-undo").hidden = !onUndo;
  document.getElementById("toast").hidden = false;
}

async function onMemoryEvent(event) {
  if (event.op !== "add") return;
  const memory = await api("GET", `/api/memories/${event.memory_id}`);
  if (memory.source_conversation_id !== chat.session) return;
  showToast(`This was saved: “${memory.content}”`, async () => {
    // An update gives way to the version it replaced; a new memory is removed.
    const standing = await api("POST", `/api/memories/${memory.id}/undo`);
    showToast(standing.id === memory.id ? "Removed from your memory." : `Kept as it was: “${standing.content}”`, null);
  });
}

async function chatPage() {
  const [profiles, overview] = await Promise.all([api("GET", "/api/profiles"), api("GET", "/api/memories/overview")]);
  chat.profiles = profiles;
  chat.overview = overview;
  const select = document.getElementById("profile-select");
  for (const profile of profiles) {
    select.append(el("option", { value: profile.id }, profile.is_primary ? `My Main Profile (${profile.name})` : profile.name));
  }
  const primary = primaryProfile();
  select.value = primary ? primary.id : "";
  const shown = new URLSearchParams(location.search).get("c");
  if (shown) {
    // Gone (deleted, expired) or not this user's: a new conversation instead.
    await openConversation(shown).catch(() => startSession(select.value || null));
  } else {
    await startSession(select.value || null);
  }
  // Seed 004: the profile selected is the conversation's (its memory follows the Main Profile).
  select.addEventListener("change", async () => {
    const profileId = select.value || null;
    if (chat.participation) {
      chat.participation = await api("PUT", `/api/conversations/${chat.session}/participants/me`, { profile_id: profileId });
      renderHeader();
    } else {
      showConversation(await api("PUT", `/api/conversations/${chat.session}`, { profile_id: profileId }));
    }
    onboard(profileId);
  });
  document.getElementById("new-conversation").addEventListener("click", () => startSession(select.value || null));
  let searching = null;
  document.getElementById("conversation-search").addEventListener("input", () => {
    clearTimeout(searching);
    searching = setTimeout(loadConversations, 250);
  });
  document.getElementById("conversation-title").addEventListener("change", async (event) => {
    showConversation(await api("PUT", `/api/conversations/${chat.session}`, { title: event.target.value }));
    await loadConversations();
  });
  document.getElementById("show-archived").addEventListener("change", loadConversations);
  // Seed 002's "Extract memories": the turns not extracted yet are queued for the worker (the gate
  // still decides; a generic chat gets nothing).
  document.getElementById("extract-memories").addEventListener("click", async () => {
    const { queued } = await api("POST", "/api/memories/extract", { conversation_id: chat.session });
    showToast(queued ? `Looking for memories in ${queued} turn${queued === 1 ? "" : "s"}.`
      : "Nothing to extract here: every turn was looked at, or this chat does not build memory.", null);
  });
  document.getElementById("archive-conversation").addEventListener("click", async () => {
    const archived = !chat.conversation.archived;
    const conversation = await api("PUT", `/api/conversations/${chat.session}`, { archived });
    if (archived) {
      await startSession(select.value || null);
      return;
    }
    showConversation(conversation);
    await loadConversations();
  });
  document.getElementById("delete-conversation").addEventListener("click", async () => {
    if (!confirm("Delete this conversation and its messages? This cannot be undone.")) return;
    await api("DELETE", `/api/conversations/${chat.session}`);
    await startSession(select.value || null);
  });
  document.getElementById("remember-toggle").addEventListener("change", async (event) => {
    showConversation(await api("PUT", `/api/conversations/${chat.session}`, { remember: event.target.checked }));
  });
  document.getElementById("onboarding-ok").addEventListener("click", () => {
    localStorage.setItem(onboardedKey(), "yes");
    document.getElementById("onboarding").hidden = true;
  });
  document.getElementById("toast-undo").addEventListener("click", () => chat.undo && chat.undo());
  document.getElementById("chat-form").addEventListener("submit", async (event) => {
    event.preventDefault();
    const input = document.getElementById("chat-input");
    const message = input.value;
    input.value = "";
    addMessage("user", message);
    // The answer appears as the model writes it; its memory chips once it is stored.
    const item = addMessage("assistant", "");
    item.classList.add("streaming");
    const answer = await streamChat({ message, session_id: chat.session }, (piece) => { item.firstChild.textContent += piece; });
    if (!answer) { item.remove(); return; }
    chat.session = answer.session_id;
    const rated = answer.answer_id ? { id: answer.answer_id, helpful: null } : null;
    item.replaceWith(addMessage("assistant", answer.response, answer.used_memories, rated));
    await loadConversations();
    if (answer.error) showError(answer.error);  // answered, but not stored (or held through an outage)
  });
  followMemories(onMemoryEvent);
  document.body.dataset.ready = "yes";
}

// --- memory settings ------------------------------------------------------------------------

const settings = { conversations: new Map(), asked: {} };

// Redraws overlap (a filter, a change elsewhere, the stream reopening): only the answer to the
// latest request of a kind is drawn, never an earlier one arriving after it.
async function latest(kind, path) {
  const asked = (settings.asked[kind] = (settings.asked[kind] || 0) + 1);
  const answer = await api("GET", path);
  return asked === settings.asked[kind] ? answer : null;
}

async function loadOverview() {
  const o = await latest("overview", "/api/memories/overview");
  if (!o) return;
  for (const key of ["live", "pinned", "archived", "deleted"]) document.getElementById(`count-${key}`).textContent = o[key];
  document.getElementById("count-by-type").textContent =
    Object.entries(o.by_type).map(([type, n]) => `${type}: ${n}`).join(" · ") || "No live memories yet.";
  document.getElementById("storage").textContent = `${(o.storage_bytes / 1024).toFixed(1)} kB stored`;
  document.getElementById("status-building").textContent = o.memory_paused ? "paused" : "building";
  document.getElementById("status-optin").textContent = o.long_term_opt_in ? "on" : "off";
  document.getElementById("pause-toggle").checked = o.memory_paused;
  document.getElementById("optin-toggle").checked = o.long_term_opt_in;
}

function memoryItem(memory) {
  // A memory drawn from a conversation keeps its mode when the conversation is deleted or swept.
  const source = memory.source_conversation_id
    ? `from “${settings.conversations.get(memory.source_conversation_id) || "a conversation"}”`
    : memory.origin_mode ? "from a conversation since deleted" : "added by hand";
  const text = el("span", { class: "content" }, memory.content);
  const item = el("li", { id: `memory-${memory.id}`, "data-type": memory.type, class: memory.pinned ? "pinned" : "" },
    el("span", { class: "number" }, `M-${memory.number}`), " ", el("span", { class: "type" }, memory.type), text, " ",
    memory.category ? el("span", { class: "category" }, memory.category) : "", " ",
    el("span", { class: "source" }, source), " ");
  const pin = el("button", { type: "button", class: "pin", "aria-pressed": String(memory.pinned),
    onclick: async () => { await api("PUT", `/api/memories/${memory.id}`, { pinned: !memory.pinned }); await refresh(); } },
  memory.pinned ? "Unpin" : "Pin");
  // An edit stores a new version of the memory (the old one is kept in its history).
  const edit = el("button", { type: "button", class: "edit", onclick: () => {
    const input = el("input", { class: "edit-content", "aria-label": "Memory text", value: memory.content });
    const save = el("button", { type: "submit", class: "save" }, "Save");
    const cancel = el("button", { type: "button", class: "cancel", onclick: () => form.replaceWith(text) }, "Cancel");
    const form = el("form", { class: "edit-form", onsubmit: async (event) => {
      event.preventDefault();
      await api("PUT", `/api/memories/${memory.id}`, { content: input.value });
      await refresh();
    } }, input, " ", save, " ", cancel);
    text.replaceWith(form);
    input.focus();
  } }, "Edit");
  const remove = el("button", { type: "button", class: "delete", "aria-label": `Delete “${memory.content}”`,
    onclick: async () => { await api("DELETE", `/api/memories/${memory.id}`); await refresh(); } }, "Delete");
  if (memory.deleted_at) {
    const restore = el("button", { type: "button", class: "restore", "aria-label": `Restore “${memory.content}”`,
      onclick: async () => { await api("POST", `/api/memories/${memory.id}/restore`); await refresh(); } }, "Restore");
    item.append(restore);
    return item;
  }
  if (memory.archived) {
    const unarchive = el("button", { type: "button", class: "unarchive",
      onclick: async () => { await api("POST", `/api/memories/${memory.id}/unarchive`); await refresh(); } }, "Unarchive");
    item.append(unarchive, " ", remove);
    return item;
  }
  item.append(pin, " ", edit, " ", remove);
  return item;
}

async function loadMemories() {
  const status = document.getElementById("status-filter").value;
  const params = new URLSearchParams({ limit: "200", status });
  const type = document.getElementById("type-filter").value;
  const category = document.getElementById("category-filter").value.trim();
  const profile = document.getElementById("profile-filter").value;
  const search = document.getElementById("search").value.trim();
  // The last 30 days of live memories by default; looking for something reaches them all.
  if (status === "active" && !(type || category || profile || search)) {
    params.set("created_from", new Date(Date.now() - 30 * 24 * 3600 * 1000).toISOString());
  }
  if (type) params.set("type", type);
  if (category) params.set("category", category);
  if (profile) params.set("profile_id", profile);
  if (search) params.set("search", search);
  const memories = await latest("memories", `/api/memories?${params}`);
  if (!memories) return;
  const list = document.getElementById("memory-list");
  // A redraw (a change elsewhere, a pin) keeps a memory being edited open with what was typed.
  const editing = list.querySelector(".edit-form");
  const typed = editing && { id: editing.closest("li").id, text: editing.querySelector("input").value };
  list.replaceChildren(...memories.map(memoryItem));
  const reopened = typed && document.getElementById(typed.id);
  if (reopened) {
    reopened.querySelector("button.edit").click();
    reopened.querySelector(".edit-content").value = typed.text;
  }
  document.getElementById("memory-empty").hidden = memories.length > 0;
  const wanted = location.hash.startsWith("#memory-") ? location.hash.slice("#memory-".length) : null;
  if (!wanted) return;
  let anchored = document.getElementById(`memory-${wanted}`);
  if (!anchored) {
    // A chip can name a memory older than the list's 30 days: it is shown above the list.
    const memory = await api("GET", `/api/memories/${wanted}`).catch(() => null);
    if (!memory) return;
    anchored = memoryItem(memory);
    list.prepend(anchored);
    document.getElementById("memory-empty").hidden = true;
  }
  anchored.classList.add("highlight");
  anchored.scrollIntoView({ block: "center" });
}

// Seed 004's summaries: each month with its emotional and cognitive summary and its themes (a
// theme of more than one month is highlighted: the patterns), and, on demand, the same month a
// year before compared with it; each week with its themes and patterns.
async function loadSummaries() {
  const [monthly, weekly] = await Promise.all([api("GET", "/api/summaries/monthly"), api("GET", "/api/summaries/weekly")]);
  const months = new Map();
  for (const m of monthly) for (const theme of m.key_themes || []) months.set(theme, (months.get(theme) || 0) + 1);
  const themes = (list) => el("span", { class: "themes" }, ...(list || []).map((theme) =>
    el("span", { class: months.get(theme) > 1 ? "theme recurring" : "theme", title: months.get(theme) > 1
      ? `A theme of ${months.get(theme)} months` : "" }, theme)));
  document.getElementById("monthly").replaceChildren(...(monthly.length ? monthly.map((m) => {
    const label = `${m.year}-${String(m.month).padStart(2, "0")}`;
    const result = el("p", { class: "comparison" });
    return el("li", { id: `month-${label}` },
      el("strong", {}, label), ": ", m.emotional_summary, " ",
      m.cognitive_summary ? el("span", { class: "cognitive" }, m.cognitive_summary) : "", " ", themes(m.key_themes), " ",
      // The month's context from its mode: in astro mode seed 004's dominant transits and planetary influences.
      Object.keys(m.context || {}).length ? el("span", { class: "context" }, Object.entries(m.context)
        .map(([key, value]) => `${key.replace(/_/g, " ")}: ${typeof value === "string" ? value : JSON.stringify(value)}`)
        .join(" · ")) : "", " ",
      el("button", { type: "button", class: "compare", onclick: () => compareMonth(m, result) },
        `Compare with ${m.year - 1}`), result);
  }) : [el("li", {}, "No monthly summaries yet.")]));
  document.getElementById("weekly").replaceChildren(...(weekly.length ? weekly.map((w) =>
    el("li", {}, `Week of ${w.week_start_date}: ${w.emotional_summary} `, themes([...(w.key_themes || []),
      ...(w.dominant_patterns || [])]))) : [el("li", {}, "No weekly summaries yet.")]));
}

// Seed 004's year over year, on demand from a month: the stored comparison, or the worker's once
// it has written it (asked again every 2 s for a minute; a comparison is queued once).
async function compareMonth(month, result, tries = 30) {
  const answer = await api("POST", `/api/summaries/compare?profile_id=${month.profile_id}&year=${month.year}&month=${month.month}`);
  if (answer.status === "ready") {
    result.textContent = answer.comparison;
  } else if (answer.status === "unavailable") {
    result.textContent = `Nothing to compare yet: ${month.year - 1} has no summary of this month.`;
  } else if (tries > 0) {
    result.textContent = `Comparing with ${month.year - 1}… it appears here when it is written.`;
    setTimeout(() => compareMonth(month, result, tries - 1), 2000);
  } else {
    result.textContent = "The comparison is still being written: look again later.";
  }
}

async function refresh() {
  await Promise.all([loadOverview(), loadMemories()]);
}

async function download(format) {
  const response = await fetch(`/api/memories/export?format=${format}`, { headers: { Authorization: `Bearer ${token()}` } });
  if (!response.ok) { showError(`Export failed (${response.status})`); return; }
  const url = URL.createObjectURL(await response.blob());
  const link = el("a", { href: url, download: `memories.${format}` });
  document.body.append(link);
  link.click();
  link.remove();
  URL.revokeObjectURL(url);
}

// A JSON or CSV export put back (seed 004's re-import path); importing twice adds nothing.
async function importFile(file) {
  const text = await file.text();
  let parsed;
  if (text.trimStart().startsWith("{")) {
    try { parsed = JSON.parse(text); } catch (_) { showError("Import failed: the file is not JSON"); return; }
  }
  const result = parsed
    ? await api("POST", "/api/memories/import", parsed).catch(() => null)
    : await api("POST", "/api/memories/import", text, "text/csv").catch(() => null);
  if (!result) return;
  document.getElementById("import-result").textContent = `${result.imported} memories imported.`;
  await refresh();
}

async function settingsPage() {
  // The titles memories name as their source: of live and archived conversations alike. The
  // opening itself is counted (seed 004's dashboard engagement).
  const [profiles, live, archived] = await Promise.all([
    api("GET", "/api/profiles"), api("GET", "/api/conversations?limit=200"),
    api("GET", "/api/conversations?limit=200&archived=true"), api("POST", "/api/dashboard-visits"),
  ]);
  for (const c of [...live, ...archived]) settings.conversations.set(c.id, c.title || "Untitled conversation");
  const profileFilter = document.getElementById("profile-filter");
  for (const p of profiles) profileFilter.append(el("option", { value: p.id }, p.name));
  document.getElementById("profile-filter-label").hidden = profiles.length < 2;

  document.getElementById("filters").addEventListener("submit", (event) => { event.preventDefault(); loadMemories(); });
  document.getElementById("status-filter").addEventListener("change", () => loadMemories());
  document.getElementById("type-filter").addEventListener("change", () => loadMemories());
  document.getElementById("category-filter").addEventListener("change", () => loadMemories());
  document.getElementById("pause-toggle").addEventListener("change", async (event) => {
    await api("PUT", "/api/memory-settings", { memory_paused: event.target.checked }); await loadOverview();
  });
  document.getElementById("optin-toggle").addEventListener("change", async (event) => {
    await api("PUT", "/api/memory-settings", { long_term_opt_in: event.target.checked }); await loadOverview();
  });
  document.getElementById("export-json").addEventListener("click", () => download("json"));
  document.getElementById("export-csv").addEventListener("click", () => download("csv"));
  document.getElementById("import-file").addEventListener("change", async (event) => {
    const [file] = event.target.files;
    event.target.value = "";
    if (file) await importFile(file);
  });
  document.getElementById("clear-all").addEventListener("click", async () => {
    if (!confirm("Clear all memories? You can undo each one for 30 days.")) return;
    await api("POST", "/api/memories/clear"); await refresh();
  });
  await Promise.all([refresh(), loadSummaries()]);
  followMemories(() => refresh(), refresh);
  document.body.dataset.ready = "yes";
}

const pages = { signin, chat: chatPage, settings: settingsPage };
const page = pages[document.body.dataset.page];
if (page) {
  if (document.body.dataset.page !== "signin" && !token()) showError("Sign in first: open the link `make serve` printed.");
  else Promise.resolve(page()).catch((error) => showError(error.message));
}
