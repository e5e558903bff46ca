/** A short spoken script (questions and answers) for the speech tests and the caption bench. */
export const SCRIPT = [
  "Why do people love short videos so much?",
  "Because a short clip respects your time and gets to the point.",
  "A good clip starts with a question and ends with its answer.",
  "That is what our editors look for every single day.",
  "What makes a moment worth sharing with friends?",
  "Surprise, humour and a clear idea in very few words.",
  "Long pauses and half sentences make viewers scroll away.",
  "So we cut at sentence ends and never inside a word.",
  "How long should a clip be on a phone screen?",
  "Around twenty seconds is plenty for one complete thought.",
  "Captions matter because most people watch without sound.",
  "Large bold words help everyone follow the story.",
];
