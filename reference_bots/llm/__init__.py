"""The language-model harness: ``arena bot llm`` (docs/llm.md).

* :mod:`~reference_bots.llm.options`: its flags and settings (light: ``arena``'s parser imports it);
* :mod:`~reference_bots.llm.prompt`: what it says beside the text view, and its version;
* :mod:`~reference_bots.llm.client`: the OpenAI-compatible chat-completions client;
* :mod:`~reference_bots.llm.bot`: the bot, its retries, fallback and notes;
* :mod:`~reference_bots.llm.estimate`: tokens per match, before a tournament starts.
"""
