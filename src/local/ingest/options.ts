import type { PageExtractor } from './extractor.js';

/** Something in a source file that did not become a page. */
export interface IngestIssue {
  /** The file. */
  source: string;
  /** "line 12" in a JSONL file, "record at byte 4096" in a WARC file. */
  location: string;
  message: string;
}

export interface IngestOptions {
  /** A malformed line or record, skipped. */
  onIssue?: (issue: IngestIssue) => void;
  /** A well-formed entry left out on purpose: not HTML or PDF, not HTTP 200, a challenge page, no text. */
  onSkip?: (issue: IngestIssue) => void;
  /** An ExtractorPool, say; the extractor on the calling thread when absent. */
  extractor?: PageExtractor;
  /** Bytes of the file read so far (compressed bytes for a .gz), for a progress line's share and ETA. */
  onBytesRead?: (bytes: number) => void;
}
