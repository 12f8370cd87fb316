// Sections of `npm run bench`, in the order they run. Each module adds its own line.
import { coreBench } from './core.ts';
import type { BenchSection } from './section.ts';
import { recapBench } from '../meeting/bench.ts';
import { mascotBench } from '../moderation/bench.ts';
import { learnBench } from '../learn/bench.ts';
import { simBench } from '../eval/bench.ts';
import { safetyBench } from '../safety/bench.ts';

export const sections: BenchSection[] = [coreBench, recapBench, mascotBench, learnBench, simBench, safetyBench];
