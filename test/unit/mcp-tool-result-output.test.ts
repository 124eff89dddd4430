import { describe, expect, it } from 'vitest';
import { toolResultOutput } from '../../src/executors/mcp/tool-result-output.ts';
import { REQUEST_LIMITS } from '../../src/protocol/request-limits.ts';

const image = (data: string, mimeType = 'image/png') => ({ type: 'image', data, mimeType });

describe('toolResultOutput', () => {
  it("attaches an image as what its bytes are: a JPEG labelled image/png goes as image/jpeg", () => {
    const jpeg = '/9j/4AAQSkZJRgABAQ==';
    const result = toolResultOutput({ content: [image(jpeg, 'image/png')] }, true);
    expect(result.images).toEqual([{ type: 'input_image', image_url: `data:image/jpeg;base64,${jpeg}`, detail: 'auto' }]);
    expect(result.text).toMatch(/^\[image 1 \(image\/jpeg, /);
  });

  it('attaches images of the types vision models take, in order, each named where it was', () => {
    const result = { content: [image('AAAA'), { type: 'text', text: 'between' }, image('BBBB', 'image/jpeg'), image('CCCC', 'image/tiff')] };
    expect(toolResultOutput(result, true)).toEqual({
      text: ['[image 1 (image/png, 3 bytes), attached]', 'between', '[image 2 (image/jpeg, 3 bytes), attached]', '[image (image/tiff, 3 bytes), not shown to the model]'].join('\n'),
      images: [
        { type: 'input_image', image_url: 'data:image/png;base64,AAAA', detail: 'auto' },
        { type: 'input_image', image_url: 'data:image/jpeg;base64,BBBB', detail: 'auto' },
      ],
    });
    expect(toolResultOutput(result, false).images).toEqual([]);
  });

  it('attaches only as many images as one inline image may hold in all, so a client resending them passes', () => {
    const big = 'A'.repeat(REQUEST_LIMITS.maxImageChars - 100);
    const { text, images } = toolResultOutput({ content: [image(big), image('BBBB'.repeat(100))] }, true);
    expect(images).toHaveLength(1);
    expect(images[0]!.image_url!.length).toBeLessThanOrEqual(REQUEST_LIMITS.maxImageChars);
    expect(text.split('\n')[1]).toBe('[image (image/png, 300 bytes), not shown to the model]');
  });
});
