/**
 * What the demo's sample says: a short talk about making clips, with
 * questions and their answers, spoken by espeak-ng in two voices and embedded
 * as the sample's subtitle track (so captions and titles work locally with no
 * speech-to-text service).
 */
export const DEMO_SCRIPT: string[] = [
  "Welcome to the clip jobs demo, a short talk about making clips.",
  "Why do short clips travel so much further than long videos?",
  "Because people decide in the first two seconds whether to keep watching.",
  "A clip that opens with a clear question gives them a reason to stay.",
  "So the engine starts a clip at the beginning of a sentence.",
  "And it ends the clip when the thought is complete, never mid word.",
  "What happens when the video has no subtitles at all?",
  "In production, Workers AI turns the speech into words with timings.",
  "On your own machine, the subtitle track inside the file is used instead.",
  "This sample carries its script as a subtitle track for exactly that reason.",
  "How are the captions drawn onto the picture?",
  "They are burned in by libass during the same encode as the clip.",
  "The word being spoken lights up in yellow as you hear it.",
  "There are three styles to choose from: bold, clean and boxed.",
  "Captions can sit at the bottom of the frame or in the center.",
  "Every clip also gets WebVTT and SubRip files for players that prefer them.",
  "Why does every clip need a title?",
  "A title tells a viewer what the moment is about before pressing play.",
  "The engine picks one sentence from the clip's own words, often its question.",
  "No language model is needed, and nothing leaves your account.",
  "What does a transcribed hour of speech cost in production?",
  "At the published price it is about three cents per hour of audio.",
  "That is cheap enough to transcribe everything you upload.",
  "Thank you for watching, and enjoy your captioned clips.",
];
